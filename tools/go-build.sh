#!/usr/bin/env bash
# Builds (or reuses) a Go program the benchmarks run beside ours: PACKAGE of the Go module in
# DIR, at the versions its go.mod/go.sum pin. The binary, named after DIR, is cached outside
# the checkout, keyed by PACKAGE, DIR's go.mod, go.sum and Go files, and this script:
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/NAME/<key>/bin/NAME
#
# Usage: tools/go-build.sh DIR PACKAGE [--print-bin-dir]
#   (no flag)        build it if missing, print the build time, print the bin dir last
#   --print-bin-dir  print the bin dir; exit 0 if it is built and current, 1 otherwise
set -euo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
dir="$(cd "$1" && pwd)"
package="$2"
shift 2
name="$(basename "$dir")"

print_only=0
for arg in "$@"; do
  case "$arg" in
    --print-bin-dir) print_only=1 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "$name: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

key="$(cd "$dir" && shopt -s nullglob && { echo "$package"; cat "$script" go.mod go.sum ./*.go; } \
  | sha256sum | cut -c1-16)"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/$name"
bin="$cache_root/$key/bin"

if [ "$print_only" = 1 ]; then
  echo "$bin"
  [ -x "$bin/$name" ]
  exit $?
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if [ -x "$bin/$name" ]; then
  echo "$name: cached"
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "$name: no Go toolchain on PATH; install Go >= 1.24 (the module proxy must be reachable)" >&2
  exit 1
fi
work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
(cd "$dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
  go build -trimpath -ldflags "-s -w" -o "$work/$name" "$package")
mkdir -p "$bin"
mv "$work/$name" "$bin/"
version="$(awk -v p="$package" '$1 == p {print " " $2; exit}' "$dir/go.mod")"
echo "$name: built$version in $(($(date +%s) - t0))s"
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -not -name "$key" -not -name '.*' -exec rm -rf {} +
echo "$bin"
