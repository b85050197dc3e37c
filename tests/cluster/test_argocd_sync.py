"""Argo CD's own sync engine (gitops-engine, built by tools/gitops as `argocd-sync`) against
the real apiserver, with the example chart's admission policy in place: what Argo CD does
where no hook runs. Argo CD renders with `helm template` and the API versions the cluster
serves; the streams here leave the chart's hooks out (Argo CD runs them as PreSync, which
test_chart_snippets covers): each sync is Argo CD's own apply, and prune, of the rest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from test_admission_policy import (
    POLICIES,
    annotations,
    denial,
    policy_in_force,
    policy_name,
    refused_delete,
    store_backup,
    unguarded,
)
from test_chart_snippets import (
    EXAMPLE,
    GUARD_VALUES,
    VAP_API,
    gitops_bin,
    show,
    without_the_example_crd,
)

from testenv import Cluster, ToolRunner

__all__ = ["gitops_bin"]  # the fixture, used by name
DEPLOYMENT = "/apis/apps/v1/namespaces/{}/deployments/rel-controller"


def rendered(helm: ToolRunner, chart: Path, namespace: str, *, without_crd: bool = False) -> str:
    """`helm template` as Argo CD runs it, without the chart's hooks (and the CRD, if asked)."""
    result = helm("template", "rel", str(chart), "-n", namespace, *GUARD_VALUES,
                  "--api-versions", VAP_API)  # fmt: skip
    assert result.returncode == 0, show(result)
    kept = [
        doc
        for doc in yaml.safe_load_all(result.stdout)
        if doc
        and "helm.sh/hook" not in (doc["metadata"].get("annotations") or {})
        and not (without_crd and doc["kind"] == "CustomResourceDefinition")
    ]
    return yaml.safe_dump_all(kept)


def sync(cluster: Cluster, gitops_bin: Path, namespace: str, stream: str) -> dict[str, Any]:
    """One Argo CD sync of the app `rel` with pruning on: its results by kind, and its phase."""
    done = subprocess.run(
        [str(gitops_bin / "argocd-sync"), "--kubeconfig", str(cluster.kubeconfig),
         "--namespace", namespace, "--app", "rel", "--prune"],
        input=stream, capture_output=True, text=True, env=cluster.env(None), timeout=180,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines, f"argocd-sync printed nothing: {done.stderr[-2000:]}"
    by_kind = {(r["kind"], r["name"]): r for r in lines[:-1]}
    return {"exit": done.returncode, "phase": lines[-1]["phase"], "results": by_kind}


def test_argo_cd_pruning_the_crd_is_refused_and_syncing_a_revision_before_the_adoption_too(
    cluster: Cluster, namespace: str, helm: ToolRunner, kubectl: ToolRunner,
    gitops_bin: Path, tmp_path: Path,
) -> None:  # fmt: skip
    without_the_example_crd(cluster)
    first = sync(cluster, gitops_bin, namespace, rendered(helm, EXAMPLE / "3.0.0", namespace))
    assert (first["exit"], first["phase"]) == (0, "Succeeded"), first
    backup = store_backup(cluster, namespace)
    policy_in_force(kubectl, namespace)

    # The CRD leaves the rendered manifest: Argo CD prunes it with a DELETE, refused.
    pruned = sync(
        cluster, gitops_bin, namespace,
        rendered(helm, EXAMPLE / "3.0.0", namespace, without_crd=True),
    )  # fmt: skip
    crd = pruned["results"][("CustomResourceDefinition", "backups.example.io")]
    assert (pruned["exit"], pruned["phase"]) == (1, "Failed"), pruned
    assert crd["status"] == "SyncFailed" and refused_delete(namespace) in crd["message"], crd
    assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"
    assert annotations(cluster)["upgrade-guard.io/crd-schema-version"] == "3"

    # An older revision from before the chart adopted the guard, which renders no policy: its
    # CRD, without the annotations, is refused, and the policy is not pruned (its sync
    # options), so the next sync is refused the same. The rest of the stream is applied all
    # the same: the Deployment runs 1.0.0's image over state version 2, which only the hook
    # (which this revision does not have) pairs with the stored state.
    before = rendered(helm, unguarded("1.0.0", tmp_path / "before"), namespace)
    for _ in range(2):
        older = sync(cluster, gitops_bin, namespace, before)
        results = older["results"]
        crd = results[("CustomResourceDefinition", "backups.example.io")]
        assert (older["exit"], older["phase"]) == (1, "Failed"), older
        assert crd["status"] == "SyncFailed", crd
        assert (
            denial(namespace)
            + (
                "this UPDATE of the CRD backups.example.io drops its upgrade-guard.io schema"
                " annotations (crd-schema-version 3 -> none"
            )
            in crd["message"]
        ), crd
        policy = results[("ValidatingAdmissionPolicy", policy_name(namespace))]
        assert policy["status"] == "PruneSkipped", policy
        assert annotations(cluster)["upgrade-guard.io/crd-schema-version"] == "3"
        assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"
    assert cluster.admin.get_or_none(f"{POLICIES}/{policy_name(namespace)}") is not None
    deployment = cluster.admin.get(DEPLOYMENT.format(namespace))
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "example.com/backup-operator:1.0.0"
