#!/usr/bin/env bash
# Builds (or reuses) the GitOps oracles the chart tests use, each a small Go module here:
#   argocd-oracle     Argo CD's own hook logic (github.com/argoproj/gitops-engine v0.7.3,
#                     pkg/sync/hook and syncwaves; k8s.io staging modules replaced by v0.23.1)
#                     classifies every object of a `helm template` stream: JSON lines on stdout
#   argocd-sync       Argo CD's own sync engine (the same gitops-engine, pkg/engine as its agent
#                     uses) syncs a stream to a cluster once, with pruning: JSON lines on stdout
#   flux-helmrelease  renders a HelmRelease from helm-controller's API types
#                     (github.com/fluxcd/helm-controller/api) with a chosen CRD policy
# Binaries are cached outside the checkout, keyed by go.mod, go.sum, main.go and this script:
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/gitops/<key>/bin
#
# Usage: tools/gitops/build.sh [--print-bin-dir]
#   (no flag)        build what is missing, print each build time, print the bin dir last
#   --print-bin-dir  print the bin dir; exit 0 if it is complete and current, 1 otherwise
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
helpers=(argocd-oracle argocd-sync flux-helmrelease)

print_only=0
for arg in "$@"; do
  case "$arg" in
    --print-bin-dir) print_only=1 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gitops: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

key="$(cd "$here" && sha256sum build.sh ./*/go.mod ./*/go.sum ./*/main.go | sha256sum | cut -c1-16)"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/gitops"
bin="$cache_root/$key/bin"

is_current() {
  local h
  for h in "${helpers[@]}"; do [ -x "$bin/$h" ] || return 1; done
}

if [ "$print_only" = 1 ]; then
  echo "$bin"
  is_current
  exit $?
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if is_current; then
  echo "gitops: cached ${helpers[*]}"
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "gitops: no Go toolchain on PATH; install Go >= 1.26 (the module proxy must be reachable)" >&2
  exit 1
fi
work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$bin"
# Each helper moves into the keyed bin dir once built, so a failed build of the next one
# costs the next run only that one.
for h in "${helpers[@]}"; do
  [ -x "$bin/$h" ] && continue
  t0=$(date +%s)
  (cd "$here/$h" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
    go build -trimpath -ldflags "-s -w" -o "$work/$h" .)
  mv "$work/$h" "$bin/"
  echo "gitops: $h built in $(($(date +%s) - t0))s"
done
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -not -name "$key" -not -name '.*' -exec rm -rf {} +
echo "$bin"
