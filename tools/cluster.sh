#!/usr/bin/env bash
# A throw-away cluster to try upgrade-guard on by hand: etcd + kube-apiserver on loopback with
# the Job runner, so `helm install/upgrade/rollback` run their hook Jobs (from the image built
# from this checkout, under bwrap). Sets up .venv and builds what is missing first (the first
# run compiles kube-apiserver and etcd and builds the image: minutes; cached afterwards).
# Prints the `export KUBECONFIG=... PATH=...` line to paste; Ctrl-C stops it and cleans up.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/kube-testenv/build.sh >&2  # progress on stderr: stdout is the cluster's own
tools/image/build.sh >&2
PYTHONPATH=tools exec .venv/bin/python -m testenv "$@"
