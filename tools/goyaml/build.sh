#!/usr/bin/env bash
# Builds (or reuses) goyaml (main.go here), Kubernetes' own YAML and JSON readers timed by
# tools/bench_readers.py, at the versions pinned in go.mod/go.sum here; cached by
# tools/go-build.sh: ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/goyaml/<key>/bin/goyaml
#
# Usage: tools/goyaml/build.sh [--print-bin-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../go-build.sh" "$here" . "$@"
