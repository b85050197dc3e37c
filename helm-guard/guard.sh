#!/bin/sh
# `helm guard`: upgrade-guard's Helm plugin. Helm passes its global flags (--namespace,
# --kube-context, --kubeconfig) as HELM_NAMESPACE, HELM_KUBECONTEXT and KUBECONFIG, and the
# rest of the command line here.
if ! command -v upgrade-guard >/dev/null 2>&1; then
  echo "helm guard: upgrade-guard is not on PATH: install it first (README.md, Install)" >&2
  exit 2
fi
exec upgrade-guard helm "$@"
