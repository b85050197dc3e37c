"""The Job runner stands in for kubelet + Job controller: what it supports, proven."""

from __future__ import annotations

from typing import Any

from testenv import JSON, Cluster, JobRunner, ToolRunner


def job(name: str, command: list[str], **pod: Any) -> JSON:
    container = {"name": "main", "image": "upgrade-guard:test", "command": command}
    container.update(pod.pop("container", {}))
    spec: JSON = {"restartPolicy": "Never", "containers": [container], **pod}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": spec}},
    }


def test_env_volumes_termination_message_and_logs(
    cluster: Cluster, namespace: str, job_runner: JobRunner, kubectl: ToolRunner
) -> None:
    a = cluster.admin
    a.create(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"metadata": {"name": "settings"}, "data": {"LEVEL": "debug", "crd.yaml": "kind: CRD\n"}},
    )
    a.create(
        f"/api/v1/namespaces/{namespace}/secrets",
        {"metadata": {"name": "creds"}, "stringData": {"password": "s3cret"}},
    )
    handle = job_runner.expect(namespace, "probe")
    script = (
        'echo "level=$UG_LEVEL pw=$PASSWORD"; '
        'cat "$1/crd.yaml"; echo "report: 2 findings" > "$2"; '
        "kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo"
    )
    body = job(
        "probe",
        ["sh", "-c", script, "probe", "/etc/ug/input", "/dev/termination-log"],
        container={
            "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "UG_"}],
            "env": [
                {
                    "name": "PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}},
                }
            ],
            "volumeMounts": [{"name": "input", "mountPath": "/etc/ug/input"}],
        },
        volumes=[{"name": "input", "configMap": {"name": "settings"}}],
    )
    a.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = handle.wait(timeout=30)
    assert outcome.succeeded, outcome.log
    run = outcome.last
    assert "level=debug pw=s3cret" in run.stdout
    assert "kind: CRD" in run.stdout
    # No serviceAccountName: the runner creates "default" (the SA controller's part).
    assert f"system:serviceaccount:{namespace}:default" in run.stdout
    assert run.termination_message == "report: 2 findings\n"
    assert run.argv[4].startswith(str(run.workdir)), run.argv  # rewritten mount path
    assert run.env["PATH"].split(":")[0] == str(cluster.venv_bin)  # console scripts first

    pod = a.get(f"/api/v1/namespaces/{namespace}/pods", labelSelector="job-name=probe")["items"][0]
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (pod["status"]["phase"], terminated["exitCode"]) == ("Succeeded", 0)
    assert terminated["message"] == "report: 2 findings\n"
    # pods/log goes through the apiserver to the fake kubelet.
    logs = kubectl("logs", "-n", namespace, "job/probe")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout == run.log


def test_backoff_limit_retries_then_fails(
    cluster: Cluster, namespace: str, job_runner: JobRunner
) -> None:
    handle = job_runner.expect(namespace, "flaky")
    body = job("flaky", ["sh", "-c", "echo attempt; exit 2"])
    body["spec"]["backoffLimit"] = 2
    cluster.admin.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = handle.wait(timeout=30)
    assert (outcome.succeeded, outcome.reason, len(outcome.runs)) == (
        False,
        "BackoffLimitExceeded",
        3,
    )
    status = cluster.admin.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/flaky")["status"]
    assert status["failed"] == 3
    assert [c["type"] for c in status["conditions"]] == ["FailureTarget", "Failed"]
    pods = cluster.admin.get(f"/api/v1/namespaces/{namespace}/pods", labelSelector="job-name=flaky")
    assert sorted(p["status"]["phase"] for p in pods["items"]) == ["Failed"] * 3


def test_deadline_and_unrunnable_jobs_fail(
    cluster: Cluster, namespace: str, job_runner: JobRunner
) -> None:
    slow = job_runner.expect(namespace, "slow")
    body = job("slow", ["sleep", "30"])
    body["spec"]["activeDeadlineSeconds"] = 1
    cluster.admin.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = slow.wait(timeout=30)
    assert outcome.reason == "DeadlineExceeded"

    # No command: the image's entrypoint is unknown, so the runner fails the Job and says why.
    bare = job_runner.expect(namespace, "bare")
    body = job("bare", [])
    del body["spec"]["template"]["spec"]["containers"][0]["command"]
    cluster.admin.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = bare.wait(timeout=30)
    assert not outcome.succeeded
    assert "has no command" in outcome.log
