#!/usr/bin/env bash
# The main job on the bundled examples. Sets up .venv first.
#   tools/example.sh            offline, in seconds: example-operator's CRDs at 1.0.0 (live)
#                               against 2.0.0 (about to be applied), with the authors' policy
#   tools/example.sh --cluster  the hook, on a throw-away cluster (tools/cluster.sh): the example
#                               chart 2.0.0 installed, a Backup stored without spec.target,
#                               `helm upgrade` to 3.0.0 refused by the guard's hook Job; then the
#                               offline `diff` of the same two releases' CRDs. The first run
#                               builds kube-apiserver, etcd and the image: minutes (Go needed);
#                               about half a minute afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") ;;
  --cluster) cluster=1 ;;
  *) echo "example: unknown argument: $1 (--cluster or nothing)" >&2; exit 2 ;;
esac

if [ -z "${cluster:-}" ]; then
  tools/setup.sh
  example="chart-snippets/example-operator"
  set +e
  .venv/bin/upgrade-guard diff "$example/crds/1.0.0" "$example/crds/2.0.0" --policy "$example/policy.yaml"
  status=$?
  set -e
  echo
  echo "exit code $status (0 safe, 1 refused, 2 bad input, 3 cluster unreachable, 4 internal error)"
  # The example is meant to be refused: anything else means the guard is broken.
  [ "$status" -eq 1 ]
  exit 0
fi

work="$(mktemp -d)"
echo "starting a throw-away cluster with tools/cluster.sh (it builds what is missing first)"
tools/cluster.sh >"$work/cluster.log" &
cluster_pid=$!
trap 'kill -TERM "$cluster_pid" 2>/dev/null; wait "$cluster_pid"; rm -rf "$work"' EXIT
until grep -q '^export KUBECONFIG=' "$work/cluster.log"; do
  kill -0 "$cluster_pid" 2>/dev/null || { echo "example: tools/cluster.sh ended" >&2; exit 1; }
  sleep 0.5
done
eval "$(grep '^export KUBECONFIG=' "$work/cluster.log")"
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"

show() { printf '\n$ %s\n' "$*"; "$@"; }
chart="chart-snippets/example"
show helm install rel "$chart/2.0.0" -n example --create-namespace
echo "# the 2.0.0 controller stores a Backup without spec.target and writes state version 2"
show kubectl apply -n example -f - <<'EOF'
apiVersion: example.io/v1
kind: Backup
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
EOF
show kubectl patch backup nightly -n example --subresource=status --type=merge \
  -p '{"status":{"stateVersion":2}}'
set +e
show helm upgrade rel "$chart/3.0.0" -n example 2>&1 | tee "$work/upgrade"
upgrade=${PIPESTATUS[0]}
show upgrade-guard diff "$chart/2.0.0/templates/crds" "$chart/3.0.0/templates/crds" \
  --policy "$chart/3.0.0/upgrade-guard/policy.yaml"
diff=$?
set -e
echo
echo "helm upgrade: exit code $upgrade; upgrade-guard diff: exit code $diff (1 refused)"
# Both are meant to refuse, the hook for the guard's reason: anything else means it is broken.
grep -q "upgrade-guard REFUSED" "$work/upgrade" && [ "$upgrade" -ne 0 ] && [ "$diff" -eq 1 ]
