"""A Job runner that plays kubelet and Job controller for hook tests.

There is no kubelet or controller-manager in the test control plane, so a Job created by
``helm install`` would wait forever. A test names the Jobs it expects
(:meth:`JobRunner.expect`); the runner polls for each, and for every new Job (new UID):

* creates a Pod for it, as the Job controller would: the template's labels plus
  ``job-name``/``controller-uid``, an owner reference to the Job, ``spec.nodeName`` set to
  the :class:`~.kubelet.FakeKubelet` node, so that ``pods/log`` (``kubectl logs``, Helm's
  ``helm.sh/hook-output-log-policy``) reads the recorded log;
* runs the first container's ``command`` + ``args`` as a **local process** (the image is
  not pulled: the project's ``.venv/bin`` and the test-env ``bin`` dir are put first on
  ``PATH`` so the console script ``upgrade-guard``, ``kubectl`` and ``helm`` stand in for
  the image's entrypoint). A container without ``command`` cannot be run (the image's
  ENTRYPOINT is unknown) and fails the run;
* environment: plain ``env[].value`` (with ``$(VAR)`` expansion), ``valueFrom``
  ``configMapKeyRef``/``secretKeyRef``/``fieldRef`` and ``envFrom`` ConfigMaps/Secrets;
  ``KUBECONFIG`` points to a kubeconfig for the Pod's ServiceAccount with a token from the
  TokenRequest API (none when ``automountServiceAccountToken: false``); no other
  variables of the test process leak in except ``PATH``/``LANG``;
* volumes: ``configMap``, ``secret`` (``items`` honoured, ``binaryData`` decoded) and
  ``emptyDir`` are written under a temporary directory. **Paths are rewritten**: any
  command/arg or env value that equals a ``mountPath`` or starts with ``mountPath/``
  (also after ``--flag=``) is rewritten to the local directory; the same holds for the
  ServiceAccount mount ``/var/run/secrets/kubernetes.io/serviceaccount`` and for
  ``terminationMessagePath`` (default ``/dev/termination-log``), whose file, if written,
  becomes the container's termination message. A program that opens an absolute mount
  path it built itself is not redirected;
* records stdout and stderr, separately and interleaved as the container log holds them;
* writes the Pod's and the Job's status through the status subresources the way the
  1.31+ Job controller does: ``startTime``/``active``; then for success ``succeeded`` with
  ``SuccessCriteriaMet`` and then ``Complete`` plus ``completionTime``; for failure retries
  up to ``backoffLimit`` (a new Pod each time, no back-off delay), then ``FailureTarget``
  and then ``Failed`` with reason ``BackoffLimitExceeded`` (``DeadlineExceeded`` when
  ``activeDeadlineSeconds`` ran out).

It also does the garbage collector's part for its Pods: when their Job is gone (Helm's
``before-hook-creation``/``hook-succeeded`` delete policies), the Pods are deleted.
"""

from __future__ import annotations

import base64
import copy
import os
import re
import secrets
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .controlplane import ControlPlane
from .kube import JSON, KubeError
from .kubelet import FakeKubelet

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_TERMINATION_PATH = "/dev/termination-log"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class JobSetupError(Exception):
    """The Job's Pod could not be started locally (unsupported volume, missing command...)."""


@dataclass
class JobRun:
    """One Pod of a Job, run as a local process."""

    namespace: str
    job: str
    job_uid: str
    pod: str
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    mounts: dict[str, Path] = field(default_factory=dict)
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    log: str = ""  # stdout and stderr interleaved, as `kubectl logs` shows it
    termination_message: str = ""
    setup_error: str = ""
    workdir: Path | None = None

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0


@dataclass
class JobOutcome:
    """What the runner did with one Job object (one UID): its Pods and the final status."""

    namespace: str
    name: str
    uid: str
    runs: list[JobRun] = field(default_factory=list)
    succeeded: bool = False
    reason: str = ""  # "" for success, else BackoffLimitExceeded / DeadlineExceeded
    status_error: str = ""  # set if the apiserver refused a status write

    @property
    def last(self) -> JobRun:
        return self.runs[-1]

    @property
    def log(self) -> str:
        return self.last.log if self.runs else ""


class JobHandle:
    """The Jobs of one namespace/name, as they come (Helm recreates hook Jobs)."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace = namespace
        self.name = name
        self.outcomes: list[JobOutcome] = []
        self.errors: list[BaseException] = []
        self._cond = threading.Condition()

    def _add(self, outcome: JobOutcome) -> None:
        with self._cond:
            self.outcomes.append(outcome)
            self._cond.notify_all()

    def _fail(self, exc: BaseException) -> None:
        with self._cond:
            self.errors.append(exc)
            self._cond.notify_all()

    def wait(self, count: int = 1, timeout: float = 120.0) -> JobOutcome:
        """Wait until ``count`` Jobs of this name have finished; return the ``count``-th."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: len(self.outcomes) >= count or bool(self.errors), timeout=timeout
            )
            if self.errors:
                raise RuntimeError(
                    f"job runner failed on {self.namespace}/{self.name}"
                ) from self.errors[0]
            if not ok:
                raise TimeoutError(
                    f"Job {self.namespace}/{self.name} #{count} did not appear and finish "
                    f"within {timeout:.0f}s (finished so far: {len(self.outcomes)})"
                )
            return self.outcomes[count - 1]


class JobRunner:
    def __init__(
        self,
        control_plane: ControlPlane,
        kubelet: FakeKubelet | None,
        workdir: Path,
        *,
        path_prepend: Sequence[Path] = (),
        default_deadline: float = 120.0,
        poll_interval: float = 0.1,
    ) -> None:
        self.cp = control_plane
        self.kube = control_plane.admin
        self.kubelet = kubelet
        self.workdir = workdir
        self.path_prepend = [str(p) for p in path_prepend]
        self.default_deadline = default_deadline
        self.poll_interval = poll_interval
        self._handles: dict[tuple[str, str], JobHandle] = {}
        self._seen: set[str] = set()
        self._pods: dict[tuple[str, str], str] = {}  # (namespace, pod) -> job uid
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # Public API --------------------------------------------------------------------------
    def expect(self, namespace: str, name: str) -> JobHandle:
        """Run every Job called ``namespace/name`` from now on; returns its handle."""
        with self._lock:
            handle = self._handles.get((namespace, name))
            if handle is None:
                handle = self._handles[(namespace, name)] = JobHandle(namespace, name)
            return handle

    def start(self) -> JobRunner:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._loop, name="job-runner", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        if self._thread is not None:
            self._thread.join(timeout=10)
        for worker in list(self._workers):
            worker.join(timeout=10)
        for (namespace, pod), _uid in list(self._pods.items()):
            self._delete_pod(namespace, pod)

    def __enter__(self) -> JobRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Poll loop ---------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                handles = list(self._handles.values())
            for handle in handles:
                try:
                    self._poll(handle)
                except Exception as exc:
                    handle._fail(exc)
            self._collect_garbage()
            self._stop.wait(self.poll_interval)

    def _poll(self, handle: JobHandle) -> None:
        path = f"/apis/batch/v1/namespaces/{handle.namespace}/jobs/{handle.name}"
        job = self.kube.get_or_none(path)
        if not job:
            return
        uid = job["metadata"]["uid"]
        if uid in self._seen or job["metadata"].get("deletionTimestamp"):
            return
        self._seen.add(uid)
        finished = {
            c["type"]
            for c in job.get("status", {}).get("conditions", [])
            if c.get("status") == "True"
        } & {"Complete", "Failed"}
        if finished:  # ran before this runner was asked to watch it
            return
        worker = threading.Thread(
            target=self._run_job_safely, args=(job, handle), name=f"job-{handle.name}", daemon=True
        )
        self._workers.append(worker)
        worker.start()

    def _collect_garbage(self) -> None:
        for (namespace, pod), uid in list(self._pods.items()):
            owner = self._owner_alive(namespace, pod, uid)
            if not owner:
                self._delete_pod(namespace, pod)

    def _owner_alive(self, namespace: str, pod: str, uid: str) -> bool:
        obj = self.kube.get_or_none(f"/api/v1/namespaces/{namespace}/pods/{pod}")
        if obj is None:
            return False
        ref = next((r for r in obj["metadata"].get("ownerReferences", []) if r["uid"] == uid), None)
        if ref is None:
            return True
        job = self.kube.get_or_none(f"/apis/batch/v1/namespaces/{namespace}/jobs/{ref['name']}")
        return bool(job) and job["metadata"]["uid"] == uid

    def _delete_pod(self, namespace: str, pod: str) -> None:
        try:
            self.kube.delete(
                f"/api/v1/namespaces/{namespace}/pods/{pod}",
                {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            )
        except KubeError:
            return
        self._pods.pop((namespace, pod), None)

    # Running one Job -----------------------------------------------------------------------
    def _run_job_safely(self, job: JSON, handle: JobHandle) -> None:
        try:
            handle._add(self._run_job(job))
        except Exception as exc:
            handle._fail(exc)

    def _job_status(self, namespace: str, name: str, status: JSON) -> None:
        self.kube.patch(
            f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status", {"status": status}
        )

    def _run_job(self, job: JSON) -> JobOutcome:
        meta, spec = job["metadata"], job["spec"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        outcome = JobOutcome(namespace, name, uid)
        backoff_limit = int(spec.get("backoffLimit", 6))
        deadline_s = float(spec.get("activeDeadlineSeconds") or self.default_deadline)
        started = time.monotonic()
        self._job_status(namespace, name, {"startTime": _now(), "active": 1, "ready": 0})
        failed = 0
        reason = ""
        while True:
            remaining = deadline_s - (time.monotonic() - started)
            run = self._run_pod(job, timeout=remaining)
            outcome.runs.append(run)
            if run.succeeded:
                break
            failed += 1
            if run.exit_code == -signal.SIGKILL and time.monotonic() - started >= deadline_s:
                reason = "DeadlineExceeded"
                break
            if failed > backoff_limit:
                reason = "BackoffLimitExceeded"
                break
            self._job_status(namespace, name, {"failed": failed})
        try:
            if reason == "":
                scm = self._condition(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                )
                self._job_status(
                    namespace, name, {"active": 0, "ready": 0, "succeeded": 1, "conditions": [scm]}
                )
                complete = self._condition(
                    "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
                )
                self._job_status(
                    namespace, name, {"conditions": [scm, complete], "completionTime": _now()}
                )
                outcome.succeeded = True
            else:
                message = {
                    "BackoffLimitExceeded": "Job has reached the specified backoff limit",
                    "DeadlineExceeded": "Job was active longer than specified deadline",
                }[reason]
                target = self._condition("FailureTarget", reason, message)
                self._job_status(
                    namespace,
                    name,
                    {"active": 0, "ready": 0, "failed": failed, "conditions": [target]},
                )
                final = self._condition("Failed", reason, message)
                self._job_status(namespace, name, {"conditions": [target, final]})
                outcome.reason = reason
        except KubeError as err:
            if err.code == 404:  # deleted while running (e.g. helm gave up); nothing to report
                outcome.status_error = str(err)
            else:
                raise
        return outcome

    @staticmethod
    def _condition(kind: str, reason: str, message: str) -> JSON:
        t = _now()
        return {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastProbeTime": t,
            "lastTransitionTime": t,
        }

    # One Pod -------------------------------------------------------------------------------
    def _run_pod(self, job: JSON, timeout: float) -> JobRun:
        meta = job["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        template = job["spec"]["template"]
        pod_spec: JSON = template["spec"]
        container: JSON = pod_spec["containers"][0]
        pod_name = f"{name[:50]}-{secrets.token_hex(3)[:5]}"
        run = JobRun(namespace, name, uid, pod_name)
        run.workdir = self.workdir / f"{namespace}.{pod_name}"
        run.workdir.mkdir(parents=True)
        chunks: list[tuple[str, bytes]] = []
        chunk_lock = threading.Lock()

        def log_bytes() -> bytes:
            with chunk_lock:
                return b"".join(c for _, c in chunks)

        self._create_pod(job, pod_name)
        if self.kubelet is not None:
            self.kubelet.set_log(namespace, pod_name, container["name"], log_bytes)
        started_at = _now()
        self._pod_status(namespace, pod_name, container, "Running", started_at)
        try:
            argv, env = self._prepare(job, pod_name, container, run)
        except (JobSetupError, KubeError) as exc:
            run.setup_error = str(exc)
            run.exit_code = 128
            with chunk_lock:
                chunks.append(("stderr", f"testenv job runner: {exc}\n".encode()))
            argv, env = [], {}
        if argv:
            run.exit_code = self._execute(argv, env, run, chunks, chunk_lock, timeout)
        with chunk_lock:
            run.stdout = b"".join(c for s, c in chunks if s == "stdout").decode(errors="replace")
            run.stderr = b"".join(c for s, c in chunks if s == "stderr").decode(errors="replace")
            run.log = b"".join(c for _, c in chunks).decode(errors="replace")
        term = run.mounts.get("__termination__")
        if term is not None and term.is_file():
            run.termination_message = term.read_text(errors="replace")[:4096]
        self._pod_status(
            namespace, pod_name, container, "Succeeded" if run.succeeded else "Failed",
            started_at, exit_code=run.exit_code, message=run.termination_message,
        )  # fmt: skip
        return run

    def _create_pod(self, job: JSON, pod_name: str) -> None:
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
        spec["nodeName"] = self.kubelet.node_name if self.kubelet else "testenv-node"
        pod = {
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
        self.kube.create(f"/api/v1/namespaces/{meta['namespace']}/pods", pod)
        self._pods[(meta["namespace"], pod_name)] = meta["uid"]

    def _pod_status(
        self,
        namespace: str,
        pod: str,
        container: JSON,
        phase: str,
        started_at: str,
        *,
        exit_code: int | None = None,
        message: str = "",
    ) -> None:
        cs: JSON = {
            "name": container["name"],
            "image": container.get("image") or "local",
            "imageID": "",
            "restartCount": 0,
        }
        if phase == "Running":
            cs.update(ready=True, started=True, state={"running": {"startedAt": started_at}})
        else:
            code = exit_code if exit_code is not None and exit_code >= 0 else 137
            terminated: JSON = {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": started_at,
                "finishedAt": _now(),
            }
            if message:
                terminated["message"] = message
            cs.update(ready=False, started=False, state={"terminated": terminated})
        status = {
            "phase": phase,
            "startTime": started_at,
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "containerStatuses": [cs],
        }
        try:
            self.kube.patch(f"/api/v1/namespaces/{namespace}/pods/{pod}/status", {"status": status})
        except KubeError as err:
            if err.code != 404:
                raise

    # Environment, volumes, path rewriting ------------------------------------------------------
    def _prepare(
        self, job: JSON, pod_name: str, container: JSON, run: JobRun
    ) -> tuple[list[str], dict[str, str]]:
        namespace = job["metadata"]["namespace"]
        pod_spec: JSON = job["spec"]["template"]["spec"]
        assert run.workdir is not None
        wd = run.workdir
        if not container.get("command"):
            raise JobSetupError(
                f"container {container['name']!r} has no command: the image's entrypoint is "
                "unknown to the test runner; give the Job an explicit command"
            )
        mounts: dict[str, Path] = {}
        volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
        for vm in container.get("volumeMounts") or []:
            vol = volumes.get(vm["name"])
            if vol is None:
                raise JobSetupError(f"volumeMount {vm['name']!r} has no volume")
            local = self._materialize(namespace, vol, wd / "volumes" / vm["name"])
            if vm.get("subPath"):
                local = local / vm["subPath"]
            mounts[vm["mountPath"].rstrip("/") or "/"] = local
        env: dict[str, str] = {
            "PATH": os.pathsep.join([*self.path_prepend, os.environ.get("PATH", "/usr/bin:/bin")]),
            "HOME": str(wd / "home"),
            "HOSTNAME": pod_name,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
        }
        (wd / "home").mkdir()
        sa_name = pod_spec.get("serviceAccountName") or pod_spec.get("serviceAccount") or "default"
        if pod_spec.get("automountServiceAccountToken", True):  # the token mount, as kubeconfig
            sa_path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
            sa = self.kube.get_or_none(f"{sa_path}/{sa_name}")
            if sa is None and sa_name == "default":  # the ServiceAccount controller's part
                sa = self.kube.ensure(
                    sa_path,
                    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
                )
            if sa is None:
                raise JobSetupError(
                    f"ServiceAccount {namespace}/{sa_name} does not exist (a real cluster would "
                    "keep the Pod in ContainerCreating); create it before the Job"
                )
            token = self.cp.service_account_token(namespace, sa_name)
            user = f"system:serviceaccount:{namespace}:{sa_name}"
            kubeconfig = self.cp.write_kubeconfig(wd / "kubeconfig", user, token, namespace)
            env["KUBECONFIG"] = str(kubeconfig)
            sa_dir = wd / "serviceaccount"
            sa_dir.mkdir()
            (sa_dir / "token").write_text(token)
            (sa_dir / "namespace").write_text(namespace)
            (sa_dir / "ca.crt").write_bytes(self.cp.pki.ca_cert.read_bytes())
            mounts.setdefault(SA_MOUNT, sa_dir)
        term_path = container.get("terminationMessagePath") or DEFAULT_TERMINATION_PATH
        mounts[term_path] = wd / "termination-log"
        run.mounts = dict(mounts)
        run.mounts["__termination__"] = wd / "termination-log"

        field_values = {
            "metadata.name": pod_name,
            "metadata.namespace": namespace,
            "metadata.uid": "",
            "spec.nodeName": self.kubelet.node_name if self.kubelet else "testenv-node",
            "spec.serviceAccountName": sa_name,
            "status.hostIP": "127.0.0.1",
            "status.podIP": "127.0.0.1",
        }
        container_env: dict[str, str] = {}
        for source in container.get("envFrom") or []:
            prefix = source.get("prefix", "")
            for key, value in self._env_source(namespace, source).items():
                container_env[prefix + key] = value
        for item in container.get("env") or []:
            if "value" in item or "valueFrom" not in item:
                container_env[item["name"]] = _expand(item.get("value", ""), container_env)
                continue
            vf = item["valueFrom"]
            if "configMapKeyRef" in vf or "secretKeyRef" in vf:
                ref = vf.get("configMapKeyRef") or vf["secretKeyRef"]
                kind = "configmaps" if "configMapKeyRef" in vf else "secrets"
                data = self._read_data(namespace, kind, ref["name"], bool(ref.get("optional")))
                if ref["key"] in data:
                    container_env[item["name"]] = data[ref["key"]].decode(errors="replace")
                elif not ref.get("optional"):
                    raise JobSetupError(f"{kind} {ref['name']} has no key {ref['key']!r}")
            elif "fieldRef" in vf:
                path = vf["fieldRef"]["fieldPath"]
                if path not in field_values:
                    raise JobSetupError(f"fieldRef {path} is not supported by the test runner")
                container_env[item["name"]] = field_values[path]
            else:
                raise JobSetupError(f"env {item['name']}: valueFrom {list(vf)} not supported")
        for key, value in container_env.items():
            env[key] = _rewrite(value, mounts)
        argv = [
            _rewrite(_expand(a, container_env), mounts)
            for a in [*container["command"], *(container.get("args") or [])]
        ]
        run.argv, run.env = argv, env
        return argv, env

    def _read_data(self, namespace: str, kind: str, name: str, optional: bool) -> dict[str, bytes]:
        obj = self.kube.get_or_none(f"/api/v1/namespaces/{namespace}/{kind}/{name}")
        if obj is None:
            if optional:
                return {}
            raise JobSetupError(f"{kind} {namespace}/{name} not found")
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

    def _env_source(self, namespace: str, source: JSON) -> dict[str, str]:
        if "configMapRef" in source:
            ref, kind = source["configMapRef"], "configmaps"
        elif "secretRef" in source:
            ref, kind = source["secretRef"], "secrets"
        else:
            raise JobSetupError(f"envFrom {list(source)} not supported")
        data = self._read_data(namespace, kind, ref["name"], bool(ref.get("optional")))
        return {k: v.decode(errors="replace") for k, v in data.items()}

    def _materialize(self, namespace: str, volume: JSON, target: Path) -> Path:
        target.mkdir(parents=True, exist_ok=True)
        if "emptyDir" in volume:
            return target
        if "configMap" in volume or "secret" in volume:
            src = volume.get("configMap") or volume["secret"]
            kind = "configmaps" if "configMap" in volume else "secrets"
            name = src.get("name") or src.get("secretName")
            data = self._read_data(namespace, kind, name, bool(src.get("optional")))
            items = src.get("items")
            pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
            for key, rel in pairs:
                if key not in data:
                    raise JobSetupError(f"{kind} {name} has no key {key!r}")
                dest = target / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data[key])
            return target
        raise JobSetupError(
            f"volume {volume['name']!r}: only configMap, secret and emptyDir volumes are supported"
        )

    def _execute(
        self,
        argv: list[str],
        env: dict[str, str],
        run: JobRun,
        chunks: list[tuple[str, bytes]],
        lock: threading.Lock,
        timeout: float,
    ) -> int:
        assert run.workdir is not None
        work = run.workdir / "cwd"
        work.mkdir()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            with lock:
                chunks.append(("stderr", f"exec {argv[0]}: {exc}\n".encode()))
            return 127 if isinstance(exc, FileNotFoundError) else 126
        with self._lock:
            self._procs.add(proc)

        reader = threading.Thread(target=_pump, args=(proc, chunks, lock), daemon=True)
        reader.start()
        try:
            code = proc.wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        reader.join(timeout=10)
        with self._lock:
            self._procs.discard(proc)
        return code


def _pump(
    proc: subprocess.Popen[bytes], chunks: list[tuple[str, bytes]], lock: threading.Lock
) -> None:
    """Read stdout and stderr in one thread, in arrival order (as a container log would)."""
    assert proc.stdout is not None and proc.stderr is not None
    labels = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    with selectors.DefaultSelector() as sel:
        for fd in labels:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fd)
                    continue
                with lock:
                    chunks.append((labels[key.fd], data))
    proc.stdout.close()
    proc.stderr.close()


_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def _expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion in command/args/env; ``$$`` escapes a ``$``."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return _VAR.sub(sub, value)


def _rewrite(value: str, mounts: dict[str, Path]) -> str:
    """Map a container path under a mountPath to the local directory standing in for it."""
    prefix = ""
    rest = value
    if value.startswith("-") and "=" in value:
        prefix, rest = value.split("=", 1)
        prefix += "="
    for mount in sorted(mounts, key=len, reverse=True):
        if rest == mount or rest.startswith(mount.rstrip("/") + "/"):
            return prefix + str(mounts[mount]) + rest[len(mount) :]
    return value
