#!/usr/bin/env bash
# Regenerates requirements/image.txt: every runtime dependency of pyproject.toml pinned for the
# image (CPython 3.11 on Linux, wheels only) with the hashes of all its published files, so
# `pip install --require-hashes` works on amd64 and arm64 alike. Run it after changing the
# dependencies in pyproject.toml and commit the result; the Dockerfile and
# tools/image/build.sh both install exactly this file.
set -euo pipefail
cd "$(dirname "$0")/../.."
uv_version=0.13.8
tool="${XDG_CACHE_HOME:-$HOME/.cache}/upgrade-guard/tools/uv-$uv_version"
if [ ! -x "$tool/bin/uv" ]; then
  python3 -m venv "$tool"
  "$tool/bin/pip" install --quiet "uv==$uv_version"
fi
"$tool/bin/uv" pip compile pyproject.toml --quiet --generate-hashes --only-binary :all: \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --custom-compile-command tools/image/lock.sh -o requirements/image.txt
