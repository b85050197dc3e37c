#!/usr/bin/env bash
# The main job on the bundled example: example-operator's CRDs at 1.0.0 (live) against 2.0.0
# (about to be applied), with the authors' policy. Sets up .venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
example=chart-snippets/example-operator
set +e
.venv/bin/upgrade-guard diff "$example/crds/1.0.0" "$example/crds/2.0.0" --policy "$example/policy.yaml"
status=$?
set -e
echo
echo "exit code $status (0 safe, 1 refused, 2 bad input, 3 cluster unreachable, 4 internal error)"
# The example is meant to be refused: anything else means the guard is broken.
[ "$status" -eq 1 ]
