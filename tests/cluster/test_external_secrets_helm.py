"""External-secrets 0.15.0 -> 0.16.0 as an admin meets it: the published charts (not
adopted) installed by the real helm, a SecretStore stored, and the upgrade checked as one
`helm guard upgrade` run, then let through by the accept command it prints, typed.

The chart's conversion and admission webhooks cannot run here (no controller Pods), so they
are switched off by the chart's own values; the CRDs then serve v1beta1 and v1 only."""

from __future__ import annotations

import json
import shlex

from test_external_secrets import CHARTS, GROUP, NEW, OLD
from ways_out import entries, printed, typed

from testenv import Cluster, ToolRunner, create_when_served, wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
VALUES = (
    "--set", "webhook.create=false",
    "--set", "crds.conversion.enabled=false",
    "--set", "certController.create=false",
)  # fmt: skip
# The fake provider's entries: one value map (0.16.0 drops valueMap, and requires value).
STORE = {"provider": {"fake": {"data": [{"key": "/db", "valueMap": {"user": "admin"}}]}}}


def _without_external_secrets_crds(cluster: Cluster) -> None:
    """The CRDs test_external_secrets.py applied by hand (no release owns them) deleted."""
    names = [c["metadata"]["name"] for c in cluster.admin.get(CRDS)["items"]
             if c["spec"]["group"].endswith(GROUP)]  # fmt: skip
    for name in names:
        cluster.admin.delete(f"{CRDS}/{name}")
    wait_for(lambda: not any(cluster.admin.get_or_none(f"{CRDS}/{n}") for n in names),
             timeout=120, what="external-secrets' CRDs deleted")  # fmt: skip


def test_helm_guard_upgrade_then_its_accept_command(
    cluster: Cluster,
    namespace: str,
    helm: ToolRunner,
    shell: ToolRunner,
    helm_guard_plugin: None,
) -> None:
    _without_external_secrets_crds(cluster)
    install = helm("install", "es", str(CHARTS / OLD), "-n", namespace, *VALUES, timeout=300)
    assert install.returncode == 0, install.stderr
    path = f"/apis/{GROUP}/v1beta1/namespaces/{namespace}/secretstores"
    create_when_served(cluster.admin, path, {
        "apiVersion": f"{GROUP}/v1beta1", "kind": "SecretStore",
        "metadata": {"name": "fake-store"}, "spec": STORE})  # fmt: skip

    upgrade = f"helm guard upgrade es {CHARTS / NEW} -n {namespace} {shlex.join(VALUES)}"
    checked = shell(upgrade)
    print(f"\n$ {upgrade}\n{checked.stdout}")
    assert checked.returncode == 1, checked.stderr
    report = checked.stdout
    assert report.startswith("upgrade-guard REFUSED: pre-upgrade of 20 CRDs; 6 error"), report
    stores = f"secretstores.{GROUP} v1beta1 spec.provider.fake.data[]"
    assert f"error UG201 property-removed {stores}.valueMap" in report, report
    assert f"error UG202 required-added {stores}.value" in report, report
    assert f"1 of 1 secretstores affected: {namespace}/fake-store" in report, report
    assert "error UG106 storage-version-changed, 4 times in 4 CRDs" in report, report
    assert "unproven" not in report, report  # every error has a witness

    accepted = entries(report)
    assert len(accepted) == 6 and {json.loads(e)["chart"] for e in accepted} == {NEW}
    command = typed(printed(report, "each refusal: "), str(CHARTS / NEW), VALUES, accepted)
    done = shell(command)
    print(f"\n$ {command}\n{done.stdout}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "upgrade-guard SAFE with 6 findings ACCEPTED by the cluster admin: pre-upgrade of 20"
    ), done.stdout
    last = json.loads(helm("history", "es", "-n", namespace, "-o", "json").stdout)[-1]
    assert (last["status"], last["chart"]) == ("deployed", f"external-secrets-{NEW}"), last
