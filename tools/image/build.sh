#!/usr/bin/env bash
# Builds the upgrade-guard image without Docker, the same image the Dockerfile describes:
#   a Debian bookworm root filesystem with its Python 3.11 (mmdebstrap), the hash-pinned
#   requirements/image.txt and the project wheel installed with the Dockerfile's own pip
#   commands (inside the tree, under bwrap, offline), packed as an OCI image archive (umoci)
#   with the Dockerfile's user, entrypoint and environment.
# Output, cached outside the checkout and keyed by every input (this script, the requirements,
# pyproject.toml, README.md, hook/):
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/image/<key>/upgrade-guard.oci.tar  the image
#   ${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/image/<key>/bundle/                umoci unpack of it:
#        rootfs/ and config.json (what tools/testenv's job runner runs under bwrap)
# The Debian base tree is cached on its own (key: suite, mirrors, packages), so a code change
# costs a pip install and a repack, not a bootstrap. Missing tools (mmdebstrap, bubblewrap,
# umoci) are installed with apt-get (as root, as in CI).
#
# Usage: tools/image/build.sh [--print-dir] [--force]
#   (no flag)    build what is missing; print size and build time, and the output dir last
#   --print-dir  print the output dir; exit 0 if it is complete and current, 1 otherwise
#   --force      rebuild the image (the Debian base tree too)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

print_only=0
force=0
for arg in "$@"; do
  case "$arg" in
    --print-dir) print_only=1 ;;
    --force) force=1 ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "image: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

suite=bookworm
mirrors=(
  "deb http://deb.debian.org/debian $suite main"
  "deb http://deb.debian.org/debian $suite-updates main"
  "deb http://deb.debian.org/debian-security $suite-security main"
)
# minbase is what debian:bookworm-slim (the python:*-slim-bookworm base) is made of, runtime
# libraries such as libstdc++ included; plus the interpreter; no docs, manuals, translations.
mmdebstrap_args=(
  --variant=minbase --include=python3
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
)
# pip runs from its wheel and is never installed into the image (the Dockerfile uninstalls it).
pip_version=26.3
pip_wheel="pip-$pip_version-py3-none-any.whl"
pip_sha256="f3b60b20ffaadd4415ed7957212a38ac63fa4c5fa375bd0f4a797777940fad13"
# Set while pip installs, as the Dockerfile's ARG sets it: pip then writes bytecode checked by
# the source's hash (PEP 552) rather than its mtime, which the image's layer keeps to the
# second only (umoci rounds it), so most bytecode was stale and, on a read-only root
# filesystem, every run compiled those modules again.
source_date_epoch=0
# The Dockerfile's install commands, word for word (tests/packaging checks they match).
install_commands='pip install --no-cache-dir --no-index --find-links /wheels --no-deps --require-hashes -r /requirements/image.txt
pip install --no-cache-dir --no-index --no-deps /wheels/upgrade_guard-*.whl'
# The Dockerfile's runtime configuration (python:3.11 images also set LANG=C.UTF-8).
image_env=(PATH=/usr/local/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LANG=C.UTF-8)
image_user=65532:65532

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/image"
base_key="$(printf '%s\n' "$suite" "${mirrors[@]}" "${mmdebstrap_args[@]}" | sha256sum | cut -c1-16)"
base="$cache_root/base-$suite-$base_key"
key="$( {
  printf '%s\n' "$base_key" "$pip_sha256" "$install_commands" "${image_env[@]}" "$image_user"
  cd "$repo" && sha256sum tools/image/build.sh requirements/image.txt pyproject.toml README.md
  find hook -type f -not -path '*/__pycache__/*' -not -name '*.pyc' -not -path '*.egg-info/*' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-16)"
dest="$cache_root/$key"
archive="$dest/upgrade-guard.oci.tar"

is_current() {
  [ -f "$dest/stamp" ] && [ -f "$archive" ] && [ -x "$dest/bundle/rootfs/usr/local/bin/upgrade-guard" ]
}

if [ "$print_only" = 1 ]; then
  echo "$dest"
  is_current
  exit $?
fi

elapsed() {  # seconds since $1 (date +%s%N), one decimal
  local tenths=$((($(date +%s%N) - $1) / 100000000))
  printf '%d.%d' $((tenths / 10)) $((tenths % 10))
}
start=$(date +%s%N)
mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"  # one build at a time (parallel pytest sessions, CI steps)
flock 9

if [ "$force" = 0 ] && is_current; then
  echo "image: cached ($(du -m "$archive" | cut -f1) MB archive, checked in $(elapsed "$start")s)"
  echo "$dest"
  exit 0
fi

missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v umoci >/dev/null || missing+=(umoci)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "image: needs ${missing[*]}: run as root or 'apt-get install ${missing[*]}'" >&2
    exit 1
  fi
  echo "image: installing ${missing[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [ "$force" = 1 ] || [ ! -x "$base/rootfs/usr/bin/python3" ]; then
  t0=$(date +%s%N)
  echo "image: bootstrapping Debian $suite with python3 (mmdebstrap)"
  mmdebstrap --quiet "${mmdebstrap_args[@]}" "$suite" "$work/base" "${mirrors[@]}"
  rm -rf "$base"
  mkdir -p "$base"
  mv "$work/base" "$base/rootfs"
  echo "image: Debian base tree in $(elapsed "$t0")s"
fi

t0=$(date +%s%N)
py=python3
[ -x "$repo/.venv/bin/python" ] && py="$repo/.venv/bin/python"
mkdir -p "$work/wheels" "$work/bin"
echo "pip==$pip_version --hash=sha256:$pip_sha256" >"$work/pip.txt"
env -u PIP_FIND_LINKS "$py" -m pip download --quiet --no-cache-dir --only-binary=:all: --no-deps \
  --require-hashes -r "$work/pip.txt" --dest "$work/pip"
env -u PIP_FIND_LINKS "$py" -m pip download --quiet --no-cache-dir --only-binary=:all: --no-deps \
  --require-hashes --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp --abi cp311 -r "$repo/requirements/image.txt" --dest "$work/wheels"
# The project wheel from a copy of the sources the Dockerfile copies.
mkdir -p "$work/src"
cp -r "$repo/pyproject.toml" "$repo/README.md" "$repo/hook" "$work/src/"
# An editable install's egg-info is the checkout's, not the sources': pip writes it anew.
find "$work/src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +
env -u PIP_FIND_LINKS "$py" -m pip wheel --quiet --no-cache-dir --no-deps --wheel-dir "$work/wheels" "$work/src"
echo "image: wheels in $(elapsed "$t0")s"

t0=$(date +%s%N)
cp -a "$base/rootfs" "$work/rootfs"
printf '#!/bin/sh\nexec python3 /tmp/pip.whl/pip "$@"\n' >"$work/bin/pip"
chmod 755 "$work/bin/pip"
# Offline (--unshare-net) and with a clean environment: only what is in the tree and the wheels.
env -i bwrap --unshare-all --die-with-parent \
  --bind "$work/rootfs" / --proc /proc --dev /dev --tmpfs /tmp \
  --ro-bind "$work/wheels" /wheels --ro-bind "$repo/requirements" /requirements \
  --ro-bind "$work/pip/$pip_wheel" /tmp/pip.whl --ro-bind "$work/bin/pip" /tmp/bin/pip \
  --setenv PATH /tmp/bin:/usr/local/bin:/usr/bin:/bin --setenv PIP_BREAK_SYSTEM_PACKAGES 1 \
  --setenv PIP_DISABLE_PIP_VERSION_CHECK 1 --setenv PIP_ROOT_USER_ACTION ignore \
  --setenv SOURCE_DATE_EPOCH "$source_date_epoch" /bin/sh -euc "$install_commands"
rmdir "$work/rootfs/wheels" "$work/rootfs/requirements"
echo "image: pip install in the tree in $(elapsed "$t0")s"

t0=$(date +%s%N)
oci="$work/oci"
umoci init --layout "$oci"
umoci new --image "$oci:upgrade-guard"
umoci unpack --image "$oci:upgrade-guard" "$work/empty"
rmdir "$work/empty/rootfs"
mv "$work/rootfs" "$work/empty/rootfs"
umoci repack --image "$oci:upgrade-guard" "$work/empty"
config=(--config.user "$image_user" --config.entrypoint upgrade-guard --config.cmd --help
  --config.workingdir /)
for e in "${image_env[@]}"; do config+=(--config.env "$e"); done
umoci config --image "$oci:upgrade-guard" "${config[@]}"
umoci gc --layout "$oci"
umoci unpack --image "$oci:upgrade-guard" "$work/bundle"
tar -C "$oci" -cf "$work/upgrade-guard.oci.tar" .
echo "image: packed with umoci in $(elapsed "$t0")s"

rm -rf "$dest"
mkdir -p "$dest"
mv "$work/upgrade-guard.oci.tar" "$work/bundle" "$dest/"
echo "$key" >"$dest/stamp"
# Keep the three newest images (worktrees with different code share this cache).
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9a-f]\{16\}' -printf '%T@ %p\n' \
  | sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
echo "image: upgrade-guard.oci.tar $(du -m "$archive" | cut -f1) MB, root filesystem $(du -sm "$dest/bundle/rootfs" | cut -f1) MB, built in $(elapsed "$start")s"
echo "$dest"
