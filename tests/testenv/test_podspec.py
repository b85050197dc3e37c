"""The Job runner's Pod spec translation, pure: what a container runs as, with what
environment and mounts (tests/cluster/test_job_runner.py runs it under bwrap)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from testenv.podspec import (
    SA_MOUNT,
    SA_VOLUME,
    ContainerPlan,
    JobSetupError,
    PodFacts,
    entrypoint,
    expand,
    identity,
    key_files,
    object_data,
    plan_container,
    pod_for_job,
    termination_message,
)
from testenv.sandbox import Image, Mount

IMAGE = Image(
    rootfs=Path("/image"),
    entrypoint=["upgrade-guard"],
    cmd=["--help"],
    env={"PATH": "/usr/bin", "LANG": "C.UTF-8"},
    user="65532:65532",
    working_dir="/work",
)
POD = PodFacts("ns", "hook-abcde", "testenv-node", "guard", 6443)
TERM = Path("/local/termination-log")
OBJECTS: dict[tuple[str, str], dict[str, bytes]] = {
    ("configmaps", "settings"): {"LEVEL": b"debug", "crd.yaml": b"kind: CRD\n"},
    ("secrets", "creds"): {"password": b"s3cret"},
}


def read_data(kind: str, name: str, optional: bool) -> Mapping[str, bytes]:
    if (kind, name) in OBJECTS:
        return OBJECTS[(kind, name)]
    if optional:
        return {}
    raise JobSetupError(f"{kind} ns/{name} not found")


def plan(
    container: dict[str, Any],
    pod_spec: dict[str, Any] | None = None,
    volumes: dict[str, Path] | None = None,
) -> ContainerPlan:
    spec = {"containers": [container], **(pod_spec or {})}
    return plan_container(
        spec, {"name": "main", **container}, IMAGE, POD, volumes or {}, TERM, read_data
    )


@pytest.mark.parametrize(
    ("container", "argv"),
    [
        ({}, ["upgrade-guard", "--help"]),
        ({"args": ["hook"]}, ["upgrade-guard", "hook"]),
        ({"command": ["sh"]}, ["sh"]),  # command drops the image's cmd too
        ({"command": ["sh"], "args": ["-c", "true"]}, ["sh", "-c", "true"]),
    ],
)
def test_command_and_args_replace_entrypoint_and_cmd(
    container: dict[str, Any], argv: list[str]
) -> None:
    command, args = entrypoint({"name": "main", **container}, IMAGE)
    assert [*command, *args] == argv


def test_no_command_and_no_entrypoint_is_a_setup_error() -> None:
    with pytest.raises(JobSetupError, match="has no command and image"):
        entrypoint({"name": "main", "image": "x"}, Image(rootfs=Path("/")))


@pytest.mark.parametrize(
    ("pod_sc", "sc", "user", "expected"),
    [
        ({}, {}, "65532:65532", (65532, 65532)),  # the image's USER
        ({}, {}, "", (0, 0)),  # no USER: root
        ({"runAsUser": 1000}, {}, "65532:65532", (1000, 65532)),  # the Pod's over the image's
        ({"runAsUser": 1000}, {"runAsUser": 2000, "runAsGroup": 3}, "", (2000, 3)),  # container's
        ({"runAsNonRoot": True}, {}, "65532", (65532, 0)),
    ],
)
def test_identity_container_then_pod_then_image(
    pod_sc: dict[str, Any], sc: dict[str, Any], user: str, expected: tuple[int, int]
) -> None:
    image = Image(rootfs=Path("/"), user=user)
    container = {"name": "main", "securityContext": sc}
    assert identity({"securityContext": pod_sc}, container, image) == expected


@pytest.mark.parametrize(
    ("pod_sc", "sc", "user", "error"),
    [
        ({"runAsNonRoot": True}, {}, "", "has runAsNonRoot and image will run as root"),
        ({}, {"runAsNonRoot": True, "runAsUser": 0}, "65532", "has runAsNonRoot"),
        ({}, {}, "nobody", "image user 'nobody' is not numeric"),
    ],
)
def test_identity_refusals(
    pod_sc: dict[str, Any], sc: dict[str, Any], user: str, error: str
) -> None:
    with pytest.raises(JobSetupError, match=error):
        identity(
            {"securityContext": pod_sc},
            {"name": "main", "securityContext": sc},
            Image(rootfs=Path("/"), user=user),
        )


def test_environment_image_then_kubelet_then_envfrom_then_env() -> None:
    container = {
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "UG_"}],
        "env": [
            {
                "name": "PASSWORD",
                "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}},
            },
            {"name": "LANG", "value": "en_US.UTF-8"},  # over the image's
            {"name": "WHERE", "value": "$(UG_LEVEL) on $(NODE) $$(UG_LEVEL) $(UNSET)"},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
            {
                "name": "MISSING",
                "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k", "optional": True}},
            },
        ],
    }
    env = plan(container).env
    assert env["PATH"] == "/usr/bin" and env["LANG"] == "en_US.UTF-8"
    assert env["UG_LEVEL"] == "debug" and env["PASSWORD"] == "s3cret"
    # $(VAR) sees only what is defined above it; $$ escapes.
    assert env["WHERE"] == "debug on $(NODE) $(UG_LEVEL) $(UNSET)"
    assert (env["NODE"], env["SA"]) == ("testenv-node", "guard")
    assert "MISSING" not in env
    assert env["HOSTNAME"] == "hook-abcde" and env["HOME"] == "/"
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert env["KUBERNETES_SERVICE_PORT"] == env["KUBERNETES_PORT_443_TCP_PORT"] == "6443"


def test_args_expand_the_containers_variables_not_the_images() -> None:
    container = {
        "command": ["echo", "$(GREETING)", "$(PATH)"],
        "env": [{"name": "GREETING", "value": "hi"}],
    }
    assert plan(container).argv == ["echo", "hi", "$(PATH)"]


@pytest.mark.parametrize(
    ("env", "error"),
    [
        (
            [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "user"}}}],
            "secrets creds has no key 'user'",
        ),
        (
            [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k"}}}],
            "configmaps ns/none not found",
        ),
        (
            [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}}],
            "fieldRef metadata.labels is not supported",
        ),
        (
            [{"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
            r"valueFrom \['resourceFieldRef'\] not supported",
        ),
    ],
)
def test_environment_refusals(env: list[dict[str, Any]], error: str) -> None:
    with pytest.raises(JobSetupError, match=error):
        plan({"env": env})


def test_mounts_at_their_paths_read_only_by_kind_and_the_service_account_token() -> None:
    pod_spec = {
        "volumes": [
            {"name": "input", "configMap": {"name": "settings"}},
            {"name": "scratch", "emptyDir": {}},
        ]
    }
    volumes = {"input": Path("/v/input"), "scratch": Path("/v/scratch"), SA_VOLUME: Path("/v/sa")}
    container = {
        "volumeMounts": [
            {"name": "input", "mountPath": "/etc/ug/input/"},
            {"name": "scratch", "mountPath": "/var/lib/probe", "subPath": "sub"},
            {"name": "scratch", "mountPath": "/ro", "readOnly": True},
        ]
    }
    assert plan(container, pod_spec, volumes).mounts == [
        Mount(Path("/v/input"), "/etc/ug/input", True),
        Mount(Path("/v/scratch/sub"), "/var/lib/probe", False),
        Mount(Path("/v/scratch"), "/ro", True),
        Mount(Path("/v/sa"), SA_MOUNT, True),
        Mount(TERM, "/dev/termination-log", False),
    ]


def test_a_container_mounting_the_token_path_itself_keeps_its_own() -> None:
    pod_spec = {"volumes": [{"name": "own", "secret": {"secretName": "creds"}}]}
    volumes = {"own": Path("/v/own"), SA_VOLUME: Path("/v/sa")}
    container = {
        "volumeMounts": [{"name": "own", "mountPath": SA_MOUNT}],
        "terminationMessagePath": "/tmp/done",
    }
    assert plan(container, pod_spec, volumes).mounts == [
        Mount(Path("/v/own"), SA_MOUNT, True),
        Mount(TERM, "/tmp/done", False),
    ]


def test_a_mount_without_its_volume_is_a_setup_error() -> None:
    with pytest.raises(JobSetupError, match="volumeMount 'data' has no volume"):
        plan({"volumeMounts": [{"name": "data", "mountPath": "/data"}]})


@pytest.mark.parametrize(
    ("security", "working_dir", "expected"),
    [({}, None, (False, "/work")), ({"readOnlyRootFilesystem": True}, "/tmp", (True, "/tmp"))],
)
def test_read_only_root_and_working_dir(
    security: dict[str, Any], working_dir: str | None, expected: tuple[bool, str]
) -> None:
    container: dict[str, Any] = {"securityContext": security}
    if working_dir:
        container["workingDir"] = working_dir
    result = plan(container)
    assert (result.read_only_root, result.working_dir) == expected
    assert (result.uid, result.gid) == (65532, 65532)


def test_object_data_decodes_what_each_kind_stores() -> None:
    b64 = base64.b64encode
    configmap = {"data": {"a": "text"}, "binaryData": {"b": b64(b"\x00\x01").decode()}}
    secret = {"data": {"c": b64(b"secret").decode()}, "stringData": {"d": "plain"}}
    assert object_data("configmaps", configmap) == {"a": b"text", "b": b"\x00\x01"}
    assert object_data("secrets", secret) == {"c": b"secret", "d": b"plain"}


@pytest.mark.parametrize(
    ("source", "files"),
    [
        ({"name": "settings"}, [("LEVEL", b"debug", 0o644), ("crd.yaml", b"kind: CRD\n", 0o644)]),
        (
            {"name": "settings", "defaultMode": 0o400},
            [("LEVEL", b"debug", 0o400), ("crd.yaml", b"kind: CRD\n", 0o400)],
        ),
        (
            {
                "name": "settings",
                "defaultMode": 0o400,
                "items": [
                    {"key": "LEVEL", "path": "conf/level", "mode": 0o600},
                    {"key": "crd.yaml", "path": "crd"},
                ],
            },
            [("conf/level", b"debug", 0o600), ("crd", b"kind: CRD\n", 0o400)],
        ),
    ],
)
def test_key_files_items_and_modes(
    source: dict[str, Any], files: list[tuple[str, bytes, int]]
) -> None:
    assert key_files(source, "configmaps", OBJECTS[("configmaps", "settings")]) == files


def test_key_files_an_item_naming_a_missing_key_is_a_setup_error() -> None:
    source = {"secretName": "creds", "items": [{"key": "user", "path": "user"}]}
    with pytest.raises(JobSetupError, match="secrets creds has no key 'user'"):
        key_files(source, "secrets", OBJECTS[("secrets", "creds")])


LOG = b"".join(f"line {n}\n".encode() for n in range(100))


@pytest.mark.parametrize(
    ("written", "policy", "exit_code", "message"),
    [
        (b"report", "File", 1, "report"),
        (b"x" * 5000, "File", 0, "x" * 4096),  # the file's last 4096 bytes
        (b"", "File", 1, ""),
        (b"", "FallbackToLogsOnError", 0, ""),  # succeeded: no fallback
        (b"", "FallbackToLogsOnError", 1, "".join(f"line {n}\n" for n in range(20, 100))),
        (b"report", "FallbackToLogsOnError", 1, "report"),
    ],
)
def test_termination_message(written: bytes, policy: str, exit_code: int, message: str) -> None:
    assert termination_message(written, policy, exit_code, LOG) == message


def test_termination_message_fallback_keeps_the_last_2048_bytes() -> None:
    log = b"".join(b"y" * 99 + b"\n" for _ in range(80))
    assert termination_message(b"", "FallbackToLogsOnError", 2, log) == log[-2048:].decode()


def test_expand_leaves_unknown_variables_and_unescapes_dollars() -> None:
    assert expand("$(A)-$(B)-$$(A)-$$$(A)-$", {"A": "1"}) == "1-$(B)-$(A)-$1-$"


def test_the_pod_the_job_controller_creates() -> None:
    job = {
        "metadata": {"name": "rel-upgrade-guard", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "guard"}, "annotations": {"a": "b"}},
                "spec": {"containers": [{"name": "main"}]},
            }
        },
    }
    pod = pod_for_job(job, "rel-upgrade-guard-abcde", "testenv-node")
    assert pod["metadata"]["labels"] == {
        "app": "guard",
        "batch.kubernetes.io/controller-uid": "u-1",
        "batch.kubernetes.io/job-name": "rel-upgrade-guard",
        "controller-uid": "u-1",
        "job-name": "rel-upgrade-guard",
    }
    assert pod["metadata"]["annotations"] == {"a": "b"}
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Job", "u-1", True)
    assert pod["spec"] == {"containers": [{"name": "main"}], "nodeName": "testenv-node"}
    assert "nodeName" not in job["spec"]["template"]["spec"]  # the Job is left as it was
