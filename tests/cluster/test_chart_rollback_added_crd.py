"""A rollback across a release that added a CRD, with the real helm against the real
apiserver: the example chart 3.0.0, then a 3.1.0 adding a Restore CRD with one object stored
in it, then `helm rollback` to 3.0.0. Helm runs 3.0.0's own pre-rollback hook, whose chart does
not list the Restore CRD, and would delete the CRD with its objects: the hook refuses with
UG608, the object counted and named (3.1.0 left the guard's service account a lasting grant
to read its CRDs), rather than exiting 2 on its own inputs; the ways out it prints, typed,
leave the release as it was, and then keep the CRD and its object through the rollback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from test_chart_snippets import GUARD_VALUES, copy_release, fresh_install, helm_status, show
from test_hook import UPGRADE_GUARD
from ways_out import printed

from testenv import Cluster, Image, JobHandle, JobRunner, ToolRunner


def _with_a_restore_crd(release: Path, group: str, kept: bool = False) -> None:
    """3.0.0 made 3.1.0: a second CRD, rendered by its own template and listed in Chart.yaml
    (``kept``: with helm.sh/resource-policy: keep, as UG608's chart author line says)."""
    chart = yaml.safe_load((release / "Chart.yaml").read_text())
    chart["version"] = chart["appVersion"] = "3.1.0"
    annotations = chart["annotations"]
    annotations["upgrade-guard.io/crds"] += f",restores.{group}"
    annotations["upgrade-guard.io/crd-templates"] += ",crds/restores.yaml"
    (release / "Chart.yaml").write_text(yaml.safe_dump(chart, sort_keys=False))
    backups = yaml.safe_load((release / "templates" / "crds" / "backups.yaml").read_text())
    backups["metadata"]["name"] = f"restores.{group}"
    backups["spec"]["group"] = group
    backups["spec"]["names"] = {"plural": "restores", "singular": "restore", "kind": "Restore",
                                "listKind": "RestoreList"}  # fmt: skip
    if kept:
        backups["metadata"].setdefault("annotations", {})["helm.sh/resource-policy"] = "keep"
    (release / "templates" / "crds" / "restores.yaml").write_text(yaml.safe_dump(backups))


def _upgraded_with_a_restore(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner, tmp_path: Path,
    kept: bool = False,
) -> tuple[JobHandle, str, str]:  # fmt: skip
    """3.0.0 installed, upgraded to 3.1.0 (a Restore CRD added), one Restore stored: the
    guard's Job, the CRD's group and the Restores' path."""
    group = f"{namespace}.example.io"
    guard = fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    added = copy_release("3.0.0", tmp_path / "3.1.0")
    _with_a_restore_crd(added, group, kept)
    # The docs' build step: the bundle packed again from the chart's rendered CRDs.
    rendered = helm("template", "rel", str(added), "-n", namespace, *GUARD_VALUES)
    assert rendered.returncode == 0, show(rendered)
    bundle = added / "upgrade-guard" / "crds.json.gz"
    packed = subprocess.run([UPGRADE_GUARD, "pack", "-", str(bundle)], input=rendered.stdout,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert packed.returncode == 0, packed.stderr
    upgrade = helm("upgrade", "rel", str(added), "-n", namespace, *GUARD_VALUES)
    assert upgrade.returncode == 0, show(upgrade)
    assert guard.wait(2, timeout=60).succeeded
    restores = f"/apis/{group}/v1/namespaces/{namespace}/restores"
    cluster.admin.create(restores, {
        "apiVersion": f"{group}/v1", "kind": "Restore", "metadata": {"name": "last-night"},
        "spec": {"schedule": "0 3 * * *", "target": "s3://backups"},
    })  # fmt: skip
    return guard, group, restores


def test_a_rollback_across_an_added_crd_is_refused_as_its_deletion(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    shell: ToolRunner,
    guard_image: Image,
    tmp_path: Path,
) -> None:
    guard, group, restores = _upgraded_with_a_restore(
        cluster, namespace, job_runner, helm, tmp_path
    )

    rollback = helm("rollback", "rel", "1", "-n", namespace)
    assert rollback.returncode != 0, show(rollback)
    refused = guard.wait(3, timeout=60).log
    log = " ".join(refused.split())
    assert log.startswith("upgrade-guard REFUSED: pre-rollback"), log
    assert f"error UG608 crd-deleted restores.{group}" in log, log
    assert (
        f"Helm deletes it, and with it the 1 object(s) stored in it ({namespace}/last-night)"
    ) in log, log
    assert "BAD INPUT" not in log and "UG608" in rollback.stderr, show(rollback)
    assert cluster.admin.get(f"{restores}/last-night")["metadata"]["name"] == "last-night"

    # The way out of the rollback it prints, typed, leaves the release at 3.1.0, deployed.
    assert helm_status(helm, namespace) == "pending-rollback"
    deleted = shell(printed(refused, "way out of this rollback: "))
    assert deleted.returncode == 0, show(deleted)
    assert helm_status(helm, namespace) == "deployed"
    # The way out of the refusal, typed: the CRD kept. The rollback then passes, and Helm
    # leaves the CRD and its object.
    kept = shell(printed(refused, "  now: ", under="error UG608 "))
    assert kept.returncode == 0, show(kept)
    again = helm("rollback", "rel", "1", "-n", namespace)
    assert again.returncode == 0, show(again)
    assert guard.wait(4, timeout=60).succeeded
    assert cluster.admin.get(f"{restores}/last-night")["metadata"]["name"] == "last-night"


def test_the_chart_authors_way_out_keeps_the_crd_through_the_rollback(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    guard_image: Image,
    tmp_path: Path,
) -> None:
    """UG608's chart author line, followed: 3.1.0's Restore CRD carries
    helm.sh/resource-policy: keep. The rollback to 3.0.0 passes, and Helm leaves the CRD and
    its object."""
    guard, _, restores = _upgraded_with_a_restore(
        cluster, namespace, job_runner, helm, tmp_path, kept=True
    )
    rollback = helm("rollback", "rel", "1", "-n", namespace)
    assert rollback.returncode == 0, show(rollback)
    passed = guard.wait(3, timeout=60)
    assert passed.succeeded and "UG608" not in passed.log, passed.log
    assert cluster.admin.get(f"{restores}/last-night")["metadata"]["name"] == "last-night"
