#!/usr/bin/env bash
# Builds (or reuses) crdify (sigs.k8s.io/crdify, Go), the reference tools/bench_crdify.py times
# our diff against, at the version pinned in go.mod/go.sum here (a `tool` of this module);
# cached by tools/go-build.sh: ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/crdify/<key>/bin/crdify
#
# Usage: tools/crdify/build.sh [--print-bin-dir]
#   (no flag)        build it if missing, print the build time, print the bin dir last
#   --print-bin-dir  print the bin dir; exit 0 if it is built and current, 1 otherwise
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../go-build.sh" "$here" sigs.k8s.io/crdify "$@"
