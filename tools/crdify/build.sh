#!/usr/bin/env bash
# Builds (or reuses) crdify (sigs.k8s.io/crdify, Go), the reference tools/bench_crdify.py times
# our diff against, at the version pinned in go.mod/go.sum here (a `tool` of this module).
# The binary is cached outside the checkout, keyed by go.mod, go.sum and this script:
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/crdify/<key>/bin/crdify
#
# Usage: tools/crdify/build.sh [--print-bin-dir]
#   (no flag)        build it if missing, print the build time, print the bin dir last
#   --print-bin-dir  print the bin dir; exit 0 if it is built and current, 1 otherwise
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

print_only=0
for arg in "$@"; do
  case "$arg" in
    --print-bin-dir) print_only=1 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "crdify: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

key="$(cd "$here" && sha256sum build.sh go.mod go.sum | sha256sum | cut -c1-16)"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/crdify"
bin="$cache_root/$key/bin"

if [ "$print_only" = 1 ]; then
  echo "$bin"
  [ -x "$bin/crdify" ]
  exit $?
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if [ -x "$bin/crdify" ]; then
  echo "crdify: cached"
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "crdify: no Go toolchain on PATH; install Go >= 1.24 (the module proxy must be reachable)" >&2
  exit 1
fi
work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
(cd "$here" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
  go build -trimpath -ldflags "-s -w" -o "$work/crdify" sigs.k8s.io/crdify)
mkdir -p "$bin"
mv "$work/crdify" "$bin/"
echo "crdify: built $(awk '$1 == "sigs.k8s.io/crdify" {print $2; exit}' "$here/go.mod") in $(($(date +%s) - t0))s"
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -not -name "$key" -not -name '.*' -exec rm -rf {} +
echo "$bin"
