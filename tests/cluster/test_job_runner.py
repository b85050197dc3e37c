"""The Job runner stands in for kubelet + Job controller: what it supports, proven."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import yaml

from testenv import GUARD_IMAGE, HOST_IMAGE, JSON, Cluster, Image, JobRunner, ToolRunner

REPO = Path(__file__).resolve().parents[2]


def job(name: str, command: list[str], **pod: Any) -> JSON:
    container = {"name": "main", "image": HOST_IMAGE, "command": command}
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
    assert run.argv[4] == "/etc/ug/input"  # mounted at its real path inside the sandbox
    assert run.mounts["/etc/ug/input"].is_dir()
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


def test_init_container_security_context_volumes_and_fallback_message(
    cluster: Cluster, namespace: str, job_runner: JobRunner
) -> None:
    handle = job_runner.expect(namespace, "podspec")
    shared = {"name": "shared", "mountPath": "/var/lib/probe"}
    main_script = (
        "echo uid=$(id -u) gid=$(id -g); cat /var/lib/probe/from-init; "
        "touch /probe 2>/dev/null || echo root is read-only; "
        "ls /var/run/secrets/kubernetes.io/serviceaccount; "
        "echo ns=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace); "
        "echo api=$KUBERNETES_SERVICE_HOST; "
        "kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo; "
        "echo refusing; exit 3"
    )
    body = job(
        "podspec",
        ["sh", "-c", main_script],
        container={
            "securityContext": {"runAsUser": 65532, "readOnlyRootFilesystem": True},
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "volumeMounts": [shared],
        },
        initContainers=[
            {
                "name": "init",
                "image": HOST_IMAGE,
                "command": ["sh", "-c", "echo written by init > /var/lib/probe/from-init"],
                "securityContext": {"runAsUser": 1000, "runAsGroup": 1000},
                "volumeMounts": [shared],
            }
        ],
        securityContext={"runAsGroup": 2000},
        volumes=[{"name": "shared", "emptyDir": {}}],
    )
    cluster.admin.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = handle.wait(timeout=60)
    run = outcome.last
    assert [(i.name, i.exit_code, i.uid) for i in run.init_containers] == [("init", 0, 1000)]
    assert run.exit_code == 3
    assert "uid=65532 gid=2000" in run.stdout  # container runAsUser, Pod runAsGroup
    assert "written by init" in run.stdout  # the emptyDir outlives the init container
    assert "root is read-only" in run.stdout
    assert "ca.crt\nnamespace\ntoken\n" in run.stdout
    assert f"ns={namespace}\napi=127.0.0.1\n" in run.stdout
    assert f"system:serviceaccount:{namespace}:default" in run.stdout  # in-cluster config
    # Nothing written to /dev/termination-log, failed, FallbackToLogsOnError: the log's tail.
    assert run.termination_message == run.log and run.log.endswith("refusing\n")
    pod = cluster.admin.get(
        f"/api/v1/namespaces/{namespace}/pods", labelSelector="job-name=podspec"
    )["items"][0]
    assert pod["status"]["phase"] == "Failed"
    init_state = pod["status"]["initContainerStatuses"][0]["state"]["terminated"]
    assert (init_state["exitCode"], init_state["reason"]) == (0, "Completed")
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["message"]) == (3, run.log)


def test_pods_a_kubelet_would_not_start_fail(
    cluster: Cluster, namespace: str, job_runner: JobRunner
) -> None:
    cases = {
        "rootless": (
            job("rootless", ["true"], securityContext={"runAsNonRoot": True}),
            "has runAsNonRoot and image will run as root",
        ),
        "unpulled": (
            job("unpulled", ["true"], container={"image": "example.com/nowhere:1"}),
            "image 'example.com/nowhere:1' is not known to the test runner",
        ),
    }
    handles = {name: job_runner.expect(namespace, name) for name in cases}
    for body, _ in cases.values():
        cluster.admin.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    for name, (_, message) in cases.items():
        outcome = handles[name].wait(timeout=30)
        assert not outcome.succeeded
        assert message in outcome.log


def test_the_image_runs_the_hook_with_in_cluster_configuration(
    cluster: Cluster, namespace: str, job_runner: JobRunner, guard_image: Image
) -> None:
    """The image built by tools/image/build.sh, under the chart's security context: its
    entrypoint, its user, a read-only root, CRDs from a ConfigMap, the ServiceAccount's
    token and the kubernetes Service variables (no kubeconfig)."""
    # A CRD of its own (CRDs are cluster-wide; other tests install example.io's).
    crd = yaml.safe_load(
        (REPO / "chart-snippets/example-operator/crds/1.0.0/backups.yaml").read_text()
    )
    group = f"g{secrets.token_hex(4)}.runner.upgrade-guard.dev"
    crd["metadata"]["name"] = crd_name = f"backups.{group}"
    crd["spec"]["group"] = group
    crd_yaml = yaml.safe_dump(crd)
    a = cluster.admin
    a.create(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"metadata": {"name": "crds"}, "data": {"backups.yaml": crd_yaml}},
    )
    sa = cluster.control_plane.make_service_account(
        namespace,
        name="guard",
        cluster_rules=[
            {
                "apiGroups": ["apiextensions.k8s.io"],
                "resources": ["customresourcedefinitions"],
                "verbs": ["get"],
                "resourceNames": [crd_name],
            }
        ],
    )
    handle = job_runner.expect(namespace, "guard")
    body = job("guard", [], serviceAccountName=sa.name)
    container = body["spec"]["template"]["spec"]["containers"][0]
    del container["command"]  # the image's ENTRYPOINT
    container.update(
        image=GUARD_IMAGE,
        args=["hook", "--phase", "pre-install", "--crds", "/etc/upgrade-guard/crds"],
        terminationMessagePolicy="FallbackToLogsOnError",
        securityContext={
            "runAsNonRoot": True,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        volumeMounts=[{"name": "crds", "mountPath": "/etc/upgrade-guard/crds"}],
    )
    body["spec"]["template"]["spec"]["volumes"] = [{"name": "crds", "configMap": {"name": "crds"}}]
    a.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    outcome = handle.wait(timeout=60)
    run = outcome.last
    assert outcome.succeeded, run.log
    assert run.argv[0] == "upgrade-guard" and run.uid == 65532  # the image's ENTRYPOINT, USER
    assert "KUBECONFIG" not in run.env
    assert run.stdout.startswith("upgrade-guard"), run.log
    assert run.termination_message.startswith("upgrade-guard"), run.termination_message
