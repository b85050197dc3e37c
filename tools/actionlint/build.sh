#!/usr/bin/env bash
# Builds (or reuses) actionlint, the GitHub Actions workflow linter, from the Go module proxy
# at the version pinned below (go.sum of the module is checked by the Go toolchain), cached at
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/tools/actionlint-<version>/actionlint
# Usage: tools/actionlint/build.sh [--print-bin]
#   (no flag)    build when missing, print the binary's path last
#   --print-bin  print the binary's path; exit 0 if it is built, 1 otherwise
set -euo pipefail

version="v1.7.12"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/tools/actionlint-$version"
bin="$cache/actionlint"

case "${1:-}" in
  --print-bin) echo "$bin"; [ -x "$bin" ]; exit $? ;;
  "") ;;
  *) echo "actionlint build: unknown argument: $1" >&2; exit 2 ;;
esac

if [ ! -x "$bin" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "actionlint build: no Go toolchain (install Go >= 1.25)" >&2
    exit 1
  fi
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    CGO_ENABLED=0 GOBIN="$cache" GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@$version"
  fi
fi
echo "$bin"
