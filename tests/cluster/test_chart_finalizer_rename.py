"""The example chart's release 4.0.0 renames the Backup finalizer (example.io/cleanup to
example.io/cleanup-v2, issue 24): installed at 3.0.0 with the real helm against the real
apiserver, the upgrade to 4.0.0 is refused by its guard Job (the real image, the chart's own
RBAC) while a stored Backup carries the old finalizer, and passes once it carries the new
one (tests/counters/test_controller_history.py holds the same releases to verify-history).
Under Helm the guard also reads what the replaced release handled from its record, so the
same rename with no migration declared is refused too, and says so, and so is a rollback to
3.0.0 once the Backup carries 4.0.0's finalizer."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from test_chart_snippets import (
    EXAMPLE,
    GUARD_VALUES,
    copy_release,
    fresh_install,
    helm_status,
    schema_version,
    show,
)

from testenv import Cluster, Image, JobRunner, ToolRunner

OLD, NEW = "example.io/cleanup", "example.io/cleanup-v2"


def test_the_upgrade_is_refused_while_a_backup_carries_the_old_finalizer(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    guard_image: Image,
    tmp_path: Path,
) -> None:
    guard = fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    # A Backup as 3.0.0's controller keeps it: carrying the finalizer it handles.
    backup = f"/apis/example.io/v1/namespaces/{namespace}/backups/nightly"
    cluster.admin.create(backup.rsplit("/", 1)[0], {
        "apiVersion": "example.io/v1", "kind": "Backup",
        "metadata": {"name": "nightly", "finalizers": [OLD]},
        "spec": {"schedule": "0 3 * * *", "target": "s3://backups"},
    })  # fmt: skip
    try:
        # 4.0.0 as its authors might have shipped it: the rename without retired-finalizers.
        undeclared = copy_release("4.0.0", tmp_path / "4.0.0")
        policy = undeclared / "upgrade-guard" / "policy.yaml"
        declared = yaml.safe_load(policy.read_text())
        del declared["controllers"][0]["retired-finalizers"]
        policy.write_text(yaml.safe_dump(declared))
        silent = helm("upgrade", "rel", str(undeclared), "-n", namespace, *GUARD_VALUES)
        assert silent.returncode != 0, show(silent)
        log = " ".join(guard.wait(2, timeout=60).log.split())
        assert (
            f"carry finalizer {OLD}, which this release no longer handles: {namespace}/nightly;"
            " deleting them never finishes (release example-operator-3.0.0 (revision 1) handles"
            " it; no migration declared)"
        ) in log, log

        four = str(EXAMPLE / "4.0.0")
        refused = helm("upgrade", "rel", four, "-n", namespace, *GUARD_VALUES)
        assert refused.returncode != 0, show(refused)
        log = guard.wait(3, timeout=60).log
        assert log.startswith("upgrade-guard REFUSED: pre-upgrade"), log
        expected = (
            f"1 stored object(s) carry finalizer {OLD}, which this release no longer handles:"
            f" {namespace}/nightly; deleting them never finishes"
        )
        assert expected in " ".join(log.split()), log
        assert "UG611" in refused.stderr, show(refused)  # helm prints the failed hook's log
        assert helm_status(helm, namespace) == "failed"
        assert schema_version(cluster) == "3"

        # The declared migration: the Backup swaps the old finalizer for the new one.
        cluster.admin.patch(backup, {"metadata": {"finalizers": [NEW]}})
        passed = helm("upgrade", "rel", four, "-n", namespace, *GUARD_VALUES)
        assert passed.returncode == 0, show(passed)
        assert guard.wait(4, timeout=60).succeeded
        history = helm("history", "rel", "-n", namespace, "-o", "json")
        deployed = [r for r in json.loads(history.stdout) if r["status"] == "deployed"]
        assert [r["chart"] for r in deployed] == ["example-operator-4.0.0"]

        # Rolling back to 3.0.0 runs 3.0.0's own hook: the release it replaces (4.0.0, from
        # its record) handles example.io/cleanup-v2, which 3.0.0 does not: refused.
        rollback = helm("rollback", "rel", "1", "-n", namespace)
        assert rollback.returncode != 0, show(rollback)
        log = " ".join(guard.wait(5, timeout=60).log.split())
        assert log.startswith("upgrade-guard REFUSED: pre-rollback"), log
        assert (
            f"carry finalizer {NEW}, which this release no longer handles: {namespace}/nightly;"
            " deleting them never finishes (release example-operator-4.0.0 (revision 4) handles"
            " it; no migration declared)"
        ) in log, log
    finally:
        cluster.admin.patch(backup, {"metadata": {"finalizers": None}})
