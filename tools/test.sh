#!/usr/bin/env bash
# The whole test suite, set-up included: .venv, the real control plane and helm (built once,
# then cached), lint, types, the layer contracts, then pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh

if command -v go >/dev/null 2>&1; then
  tools/kube-testenv/build.sh
  tools/kube-testenv/build.sh tools/kube-testenv/v1.32  # the oldest minor's truth rows
  tools/gitops/build.sh  # Argo CD and Flux oracles for the chart tests
  tools/actionlint/build.sh >/dev/null  # lints .github/workflows in tests/packaging
elif [ "${CI:-}" = "true" ]; then
  echo "tools/test.sh: CI=true but no Go toolchain: cannot build the control plane and oracles" >&2
  exit 1
else
  echo "tools/test.sh: no Go toolchain; cluster tests will be skipped (install Go >= 1.25)"
fi

# The image a hook Job runs (tests/cluster run it under bwrap): built once per code change.
tools/image/build.sh

.venv/bin/ruff check hook tests tools
.venv/bin/ruff format --check hook tests tools
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
# The docs site, strictly (a broken link or anchor fails), built outside the tree.
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
.venv/bin/pytest "$@"
