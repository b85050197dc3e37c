"""What the kubelet and the Job controller would run for a Job, worked out from the spec alone.

Pure: no apiserver, no files written, no processes. :mod:`.jobrunner` does the running (the
sandbox, the status writes); here:

* :func:`pod_for_job`: the Pod the Job controller creates for a Job;
* :func:`plan_container`: one container as a :class:`ContainerPlan` (argv, environment,
  mounts, uid/gid, working directory, read-only root), given the image, what the kubelet
  knows about the Pod (:class:`PodFacts`), where the Pod's volumes are and a ``read_data``
  function for ConfigMaps and Secrets (the runner reads the apiserver, tests pass a dict);
* :func:`object_data` / :func:`key_files`: a ConfigMap's or Secret's keys and the files a
  volume of it holds;
* :func:`termination_message`: what the kubelet reports when the container has ended.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .kube import JSON
from .sandbox import Image, Mount

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
SA_VOLUME = "kube-api-access"
DEFAULT_TERMINATION_PATH = "/dev/termination-log"
# The volume the ServiceAccount admission plugin adds, with the ``namespace`` file beside it.
SA_TOKEN_VOLUME: JSON = {
    "name": SA_VOLUME,
    "projected": {
        "sources": [
            {"serviceAccountToken": {"path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
        ]
    },
}
READ_ONLY_KINDS = ("configMap", "secret", "projected")

# (kind, name, optional) -> the object's keys; kind is "configmaps" or "secrets". A missing
# object is {} when optional, else JobSetupError.
DataReader = Callable[[str, str, bool], Mapping[str, bytes]]


class JobSetupError(Exception):
    """The Job's Pod could not be started (unknown image, unsupported volume, no command...)."""


@dataclass(frozen=True)
class PodFacts:
    """What the kubelet knows about the Pod besides its spec."""

    namespace: str
    name: str
    node_name: str
    service_account: str
    apiserver_port: int  # of the default namespace's kubernetes Service, on 127.0.0.1


@dataclass(frozen=True)
class ContainerPlan:
    argv: list[str]  # in the container
    env: dict[str, str]
    mounts: list[Mount]
    uid: int
    gid: int
    working_dir: str
    read_only_root: bool


def pod_for_job(job: JSON, pod_name: str, node_name: str) -> JSON:
    """The Pod the Job controller creates: the template's labels plus ``job-name`` and
    ``controller-uid``, an owner reference to the Job, bound to ``node_name``."""
    meta = job["metadata"]
    template = job["spec"]["template"]
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update(
        {
            "batch.kubernetes.io/controller-uid": meta["uid"],
            "batch.kubernetes.io/job-name": meta["name"],
            "controller-uid": meta["uid"],
            "job-name": meta["name"],
        }
    )
    spec = copy.deepcopy(template["spec"])
    spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name,
            "labels": labels,
            "annotations": dict(tmeta.get("annotations") or {}),
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def service_account_name(pod_spec: JSON) -> str:
    return str(pod_spec.get("serviceAccountName") or pod_spec.get("serviceAccount") or "default")


def plan_container(
    pod_spec: JSON,
    container: JSON,
    image: Image,
    pod: PodFacts,
    volumes: Mapping[str, Path],
    termination_log: Path,
    read_data: DataReader,
) -> ContainerPlan:
    """``container`` of ``pod_spec`` as the kubelet runs it from ``image``; ``volumes`` maps
    each volume of the Pod (and :data:`SA_VOLUME`) to its local directory, and
    ``termination_log`` is the local file behind ``terminationMessagePath``."""
    command, args = entrypoint(container, image)
    uid, gid = identity(pod_spec, container, image)
    mounts = container_mounts(pod_spec, container, volumes, termination_log)
    container_env = container_environment(container, pod, read_data)
    env = {**image.env, **kubelet_environment(pod), **container_env}
    env.setdefault("HOME", "/")  # what containerd and CRI-O give a uid without a passwd entry
    security = container.get("securityContext") or {}
    return ContainerPlan(
        argv=[expand(a, container_env) for a in [*command, *args]],
        env=env,
        mounts=mounts,
        uid=uid,
        gid=gid,
        working_dir=container.get("workingDir") or image.working_dir,
        read_only_root=bool(security.get("readOnlyRootFilesystem")),
    )


def entrypoint(container: JSON, image: Image) -> tuple[list[str], list[str]]:
    """``command`` replaces the image's entrypoint and drops its cmd; ``args`` replace cmd."""
    command = list(container.get("command") or image.entrypoint)
    args = list(container.get("args") or ([] if container.get("command") else image.cmd))
    if not command and not args:
        raise JobSetupError(
            f"container {container['name']!r} has no command and image "
            f"{container.get('image')!r} has no entrypoint"
        )
    return command, args


def identity(pod_spec: JSON, container: JSON, image: Image) -> tuple[int, int]:
    """uid and gid as the kubelet chooses them: container securityContext, then the Pod's,
    then the image's USER; runAsNonRoot refuses uid 0."""
    pod_sc = pod_spec.get("securityContext") or {}
    sc = container.get("securityContext") or {}
    image_uid, _, image_gid = image.user.partition(":")
    if image_uid and not image_uid.isdigit():
        raise JobSetupError(f"image user {image.user!r} is not numeric")
    uid = sc.get("runAsUser", pod_sc.get("runAsUser", int(image_uid or 0)))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup", int(image_gid or 0)))
    if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) and uid == 0:
        raise JobSetupError(
            f"container {container['name']!r} has runAsNonRoot and image will run as root"
        )
    return int(uid), int(gid)


def container_mounts(
    pod_spec: JSON, container: JSON, volumes: Mapping[str, Path], termination_log: Path
) -> list[Mount]:
    """The container's volumeMounts (``subPath`` included; configMap, secret and projected
    volumes always read-only), the ServiceAccount volume unless it mounts that path itself,
    and the termination log."""
    mounts: list[Mount] = []
    for vm in container.get("volumeMounts") or []:
        local = volumes.get(vm["name"])
        if local is None:
            raise JobSetupError(f"volumeMount {vm['name']!r} has no volume")
        if vm.get("subPath"):
            local = local / vm["subPath"]
        read_only = bool(vm.get("readOnly")) or volume_kind(pod_spec, vm["name"]) in READ_ONLY_KINDS
        mounts.append(Mount(local, vm["mountPath"].rstrip("/") or "/", read_only))
    if SA_VOLUME in volumes and SA_MOUNT not in {m.target for m in mounts}:
        mounts.append(Mount(volumes[SA_VOLUME], SA_MOUNT, True))
    mounts.append(Mount(termination_log, termination_path(container), False))
    return mounts


def volume_kind(pod_spec: JSON, name: str) -> str:
    """``configMap``, ``secret``, ``emptyDir``...: the kind of the Pod's volume ``name``."""
    for volume in pod_spec.get("volumes") or []:
        if volume["name"] == name:
            return next(k for k in volume if k != "name")
    return "projected"  # the ServiceAccount token volume


def kubelet_environment(pod: PodFacts) -> dict[str, str]:
    """``HOSTNAME`` and the default namespace's kubernetes Service, as the kubelet injects
    them: the test apiserver on loopback, so in-cluster configuration works."""
    port = str(pod.apiserver_port)
    return {
        "HOSTNAME": pod.name,
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": port,
        "KUBERNETES_SERVICE_PORT_HTTPS": port,
        "KUBERNETES_PORT": f"tcp://127.0.0.1:{port}",
        "KUBERNETES_PORT_443_TCP": f"tcp://127.0.0.1:{port}",
        "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_443_TCP_PORT": port,
        "KUBERNETES_PORT_443_TCP_ADDR": "127.0.0.1",
    }


def container_environment(container: JSON, pod: PodFacts, read_data: DataReader) -> dict[str, str]:
    """``envFrom`` (with its prefix), then ``env`` in order: ``value`` with ``$(VAR)``
    expansion, ``configMapKeyRef``/``secretKeyRef``, ``fieldRef``."""
    field_values = {
        "metadata.name": pod.name,
        "metadata.namespace": pod.namespace,
        "metadata.uid": "",
        "spec.nodeName": pod.node_name,
        "spec.serviceAccountName": pod.service_account,
        "status.hostIP": "127.0.0.1",
        "status.podIP": "127.0.0.1",
    }
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for key, value in env_source(source, read_data).items():
            env[prefix + key] = value
    for item in container.get("env") or []:
        if "value" in item or "valueFrom" not in item:
            env[item["name"]] = expand(item.get("value", ""), env)
            continue
        vf = item["valueFrom"]
        if "configMapKeyRef" in vf or "secretKeyRef" in vf:
            ref = vf.get("configMapKeyRef") or vf["secretKeyRef"]
            kind = "configmaps" if "configMapKeyRef" in vf else "secrets"
            data = read_data(kind, ref["name"], bool(ref.get("optional")))
            if ref["key"] in data:
                env[item["name"]] = data[ref["key"]].decode(errors="replace")
            elif not ref.get("optional"):
                raise JobSetupError(f"{kind} {ref['name']} has no key {ref['key']!r}")
        elif "fieldRef" in vf:
            path = vf["fieldRef"]["fieldPath"]
            if path not in field_values:
                raise JobSetupError(f"fieldRef {path} is not supported by the test runner")
            env[item["name"]] = field_values[path]
        else:
            raise JobSetupError(f"env {item['name']}: valueFrom {list(vf)} not supported")
    return env


def env_source(source: JSON, read_data: DataReader) -> dict[str, str]:
    if "configMapRef" in source:
        ref, kind = source["configMapRef"], "configmaps"
    elif "secretRef" in source:
        ref, kind = source["secretRef"], "secrets"
    else:
        raise JobSetupError(f"envFrom {list(source)} not supported")
    data = read_data(kind, ref["name"], bool(ref.get("optional")))
    return {k: v.decode(errors="replace") for k, v in data.items()}


def object_data(kind: str, obj: JSON) -> dict[str, bytes]:
    """A ConfigMap's ``data`` and ``binaryData``, or a Secret's ``data`` and ``stringData``."""
    out: dict[str, bytes] = {}
    if kind == "configmaps":
        for k, v in (obj.get("data") or {}).items():
            out[k] = v.encode()
        for k, v in (obj.get("binaryData") or {}).items():
            out[k] = base64.b64decode(v)
    else:
        for k, v in (obj.get("data") or {}).items():
            out[k] = base64.b64decode(v)
        for k, v in (obj.get("stringData") or {}).items():
            out[k] = v.encode()
    return out


def key_files(source: JSON, kind: str, data: Mapping[str, bytes]) -> list[tuple[str, bytes, int]]:
    """The files (relative path, content, mode) of a configMap or secret volume, or of such
    a projected source: ``items`` when given, else every key; ``mode``, else
    ``defaultMode``, else 0644."""
    name = str(source.get("name") or source.get("secretName"))
    items = source.get("items")
    pairs = (
        [(i["key"], i["path"], i.get("mode")) for i in items]
        if items
        else [(k, k, None) for k in data]
    )
    files = []
    for key, rel, mode in pairs:
        if key not in data:
            raise JobSetupError(f"{kind} {name} has no key {key!r}")
        files.append(
            (rel, data[key], mode if mode is not None else source.get("defaultMode", 0o644))
        )
    return files


def termination_path(container: JSON) -> str:
    return str(container.get("terminationMessagePath") or DEFAULT_TERMINATION_PATH)


def termination_message(written: bytes, policy: str, exit_code: int | None, log: bytes) -> str:
    """What the kubelet puts in ``state.terminated.message``: the last 4096 bytes of the
    termination-message file; if that is empty, the container failed and the policy is
    FallbackToLogsOnError, the log's last 80 lines, at most its last 2048 bytes."""
    message = written[-4096:]
    if not message and policy == "FallbackToLogsOnError" and exit_code != 0:
        message = b"".join(log.splitlines(keepends=True)[-80:])[-2048:]
    return message.decode(errors="replace")


_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(value: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion in command/args/env; ``$$`` escapes a ``$``."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return _VAR.sub(sub, value)
