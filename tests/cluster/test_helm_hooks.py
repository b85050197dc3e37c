"""Proof that real helm (v4) installs and upgrades a chart whose pre-install/pre-upgrade Job
hook is run by the test Job runner: the release goes on when the hook succeeds and fails
when it fails, with the hook's log printed by helm (hook-output-log-policy: hook-failed,
served through the fake kubelet)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testenv import Cluster, JobRunner, ToolRunner

CHART = str(Path(__file__).parent / "charts" / "hooked")


def show(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_helm_install_and_upgrade_run_the_hook(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner
) -> None:
    hook = job_runner.expect(namespace, "rel-check")
    install = helm("install", "rel", CHART, "-n", namespace, "--timeout", "90s")
    assert install.returncode == 0, show(install)
    first = hook.wait(1, timeout=30)
    assert first.succeeded
    run = first.last
    assert f"hook ran in {namespace}" in run.stdout
    assert "widgets.yaml" in run.stdout  # the ConfigMap volume, via the rewritten $1
    assert "configmap/rel-hook-input" in run.stdout  # kubectl as the hook's ServiceAccount
    assert "secrets: forbidden, as the Role says" in run.stdout
    assert run.stderr == "exiting with 0\n"
    assert run.env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"  # in-cluster configuration
    job = cluster.admin.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/rel-check")
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert job["status"]["succeeded"] == 1
    assert cluster.admin.get(f"/api/v1/namespaces/{namespace}/configmaps/rel-settings")

    upgrade = helm(
        "upgrade", "rel", CHART, "-n", namespace, "--set", "revisionNote=second",
        "--set", "hook.message=upgrade hook ran", "--timeout", "90s",
    )  # fmt: skip
    assert upgrade.returncode == 0, show(upgrade)
    second = hook.wait(2, timeout=30)
    assert second.succeeded and second.uid != first.uid  # before-hook-creation: a new Job
    assert f"upgrade hook ran in {namespace}" in second.log
    settings = cluster.admin.get(f"/api/v1/namespaces/{namespace}/configmaps/rel-settings")
    assert settings["data"]["note"] == "second"

    failing = helm(
        "upgrade", "rel", CHART, "-n", namespace, "--set", "revisionNote=third",
        "--set", "hook.exitCode=3", "--set", "hook.message=refusing upgrade",
        "--timeout", "90s",
    )  # fmt: skip
    assert failing.returncode != 0, show(failing)
    third = hook.wait(3, timeout=30)
    assert not third.succeeded and third.reason == "BackoffLimitExceeded"
    assert len(third.runs) == 1  # backoffLimit: 0
    assert (
        "Error: UPGRADE FAILED: pre-upgrade hooks failed: "
        f"resource Job/{namespace}/rel-check not ready. status: Failed"
    ) in failing.stderr, show(failing)
    # The hook's log, read by helm from pods/log (served by the fake kubelet) and printed
    # on stderr as ONE slog line, newlines escaped: level=INFO msg="line1\nline2...". client-go
    # may log a watch warning before it, so look for the line rather than take the first.
    log_lines = [
        line for line in failing.stderr.splitlines() if line.startswith('level=INFO msg="')
    ]
    assert len(log_lines) == 1, show(failing)
    log_line = log_lines[0]
    assert f"refusing upgrade in {namespace}\\n" in log_line, show(failing)
    assert "exiting with 3" in log_line, show(failing)
    settings = cluster.admin.get(f"/api/v1/namespaces/{namespace}/configmaps/rel-settings")
    assert settings["data"]["note"] == "second"  # the upgrade did not happen
    status = helm("status", "rel", "-n", namespace, "-o", "json")
    assert '"status":"failed"' in status.stdout.replace(" ", ""), show(status)


def test_helm_install_fails_when_the_hook_fails(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner
) -> None:
    hook = job_runner.expect(namespace, "bad-check")
    install = helm(
        "install", "bad", CHART, "-n", namespace, "--set", "hook.exitCode=1",
        "--set", "hook.message=refusing install", "--timeout", "90s",
    )  # fmt: skip
    assert install.returncode != 0, show(install)
    outcome = hook.wait(1, timeout=30)
    assert not outcome.succeeded
    assert (
        "Error: INSTALLATION FAILED: failed pre-install: "
        f"resource Job/{namespace}/bad-check not ready. status: Failed"
    ) in install.stderr, show(install)
    assert f'level=INFO msg="refusing install in {namespace}' in install.stderr, show(install)
    job = cluster.admin.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/bad-check")
    conditions = {c["type"]: c for c in job["status"]["conditions"]}
    assert list(conditions) == ["FailureTarget", "Failed"]
    assert conditions["Failed"]["reason"] == "BackoffLimitExceeded"
    assert job["status"]["failed"] == 1
    # The normal resources were never created.
    assert (
        cluster.admin.get_or_none(f"/api/v1/namespaces/{namespace}/configmaps/bad-settings") is None
    )
