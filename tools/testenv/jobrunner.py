"""A Job runner that plays kubelet and Job controller for hook tests.

There is no kubelet or controller-manager in the test control plane, so a Job created by
``helm install`` would wait forever. A test names the Jobs it expects
(:meth:`JobRunner.expect`); the runner polls for each (with ``every_job``, for all Jobs of
the cluster, as ``python -m testenv`` runs it), and for every new Job (new UID):

* creates a Pod for it, as the Job controller would: the template's labels plus
  ``job-name``/``controller-uid``, an owner reference to the Job, ``spec.nodeName`` set to
  the :class:`~.kubelet.FakeKubelet` node, so that ``pods/log`` (``kubectl logs``, Helm's
  ``helm.sh/hook-output-log-policy``) reads the recorded log;
* runs the Pod's init containers in order, then its one container, each from its **image**
  under bubblewrap (:mod:`.sandbox`): ``images`` maps an image reference to an image built
  by ``tools/image/build.sh`` (root filesystem + OCI config: entrypoint, cmd, env, user,
  working dir); ``testenv/host`` is the test machine's own root, read-only, with
  ``path_prepend`` first on ``PATH`` (for test Jobs that need ``sh``, ``kubectl``); any
  other image fails the Pod, as a pull error would. ``command``/``args`` replace the
  entrypoint/cmd as Kubernetes says. The process runs as ``runAsUser``/``runAsGroup``
  (container, then Pod, then the image's USER; ``runAsNonRoot`` refuses uid 0), with a
  read-only root under ``readOnlyRootFilesystem`` (else writable ``/tmp`` and ``/var/tmp``);
* environment: the image's, the ``kubernetes`` Service variables
  (``KUBERNETES_SERVICE_HOST``/``PORT`` name the test apiserver on loopback, so in-cluster
  configuration works), ``HOSTNAME``, then ``envFrom`` ConfigMaps/Secrets and ``env``
  (``value`` with ``$(VAR)`` expansion, ``configMapKeyRef``/``secretKeyRef``/``fieldRef``);
  nothing of the test process leaks in;
* volumes, bound at their real mount paths: ``configMap`` and ``secret`` (``items``,
  ``defaultMode``/``mode``, ``binaryData``; always read-only), ``emptyDir`` (mode 0777),
  ``projected`` (``serviceAccountToken``, ``configMap``, ``secret``), ``subPath``; unless
  ``automountServiceAccountToken: false``, the ServiceAccount volume at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` (``token`` from the TokenRequest API,
  ``ca.crt``, ``namespace``);
* ``terminationMessagePath`` (default ``/dev/termination-log``) is a writable file; the
  container's termination message is its last 4096 bytes or, when it is empty, the
  container failed and ``terminationMessagePolicy: FallbackToLogsOnError``, the log's last
  80 lines (at most 2048 bytes), as the kubelet does;
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

import functools
import os
import secrets
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

from .controlplane import ControlPlane
from .kube import JSON, KubeError
from .kubelet import FakeKubelet
from .podspec import (
    SA_TOKEN_VOLUME,
    SA_VOLUME,
    JobSetupError,
    PodFacts,
    key_files,
    object_data,
    plan_container,
    pod_for_job,
    service_account_name,
    termination_message,
    termination_path,
)
from .sandbox import HOST_IMAGE, Image, SandboxError, bwrap_argv, host_image


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ContainerRun:
    """One container of a Pod, as it ran."""

    name: str = ""
    argv: list[str] = field(default_factory=list)  # in the container, before bwrap
    env: dict[str, str] = field(default_factory=dict)
    mounts: dict[str, Path] = field(default_factory=dict)  # mount path -> local source
    uid: int | None = None
    gid: int | None = None
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    log: str = ""  # stdout and stderr interleaved, as `kubectl logs` shows it
    termination_message: str = ""
    setup_error: str = ""

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0


@dataclass
class JobRun(ContainerRun):
    """One Pod of a Job: its (main) container's run, and its init containers' before it."""

    namespace: str = ""
    job: str = ""
    job_uid: str = ""
    pod: str = ""
    init_containers: list[ContainerRun] = field(default_factory=list)
    workdir: Path | None = None


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
        images: Mapping[str, Image] = {},
        path_prepend: Sequence[Path] = (),
        default_deadline: float = 120.0,
        poll_interval: float = 0.1,
        every_job: bool = False,
        say: Callable[[str], None] | None = None,
    ) -> None:
        """``every_job``: run every Job of the cluster, not only those named with
        :meth:`expect`. ``say``: told one line when a Job starts and when it ends."""
        self.cp = control_plane
        self.kube = control_plane.admin
        self.kubelet = kubelet
        self.workdir = workdir
        self.images = dict(images)
        self.host_image = host_image(path_prepend)
        self.default_deadline = default_deadline
        self.poll_interval = poll_interval
        self.every_job = every_job
        self.say = say
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
            if self.every_job:
                self._poll_every_job()
            else:
                with self._lock:
                    handles = list(self._handles.values())
                for handle in handles:
                    path = f"/apis/batch/v1/namespaces/{handle.namespace}/jobs/{handle.name}"
                    self._poll(handle, lambda path=path: self.kube.get_or_none(path))
            self._collect_garbage()
            self._stop.wait(self.poll_interval)

    def _poll_every_job(self) -> None:
        try:
            jobs = self.kube.get("/apis/batch/v1/jobs")["items"]
        except KubeError as exc:
            self._say(f"job runner: cannot list Jobs: {exc}")
            return
        for job in jobs:
            handle = self.expect(job["metadata"]["namespace"], job["metadata"]["name"])
            self._poll(handle, lambda job=job: job)

    def _poll(self, handle: JobHandle, read: Callable[[], JSON | None]) -> None:
        try:
            self._consider(handle, read())
        except Exception as exc:
            self._say(f"job {handle.namespace}/{handle.name}: runner error: {exc}")
            handle._fail(exc)

    def _consider(self, handle: JobHandle, job: JSON | None) -> None:
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
        where = f"job {handle.namespace}/{handle.name}"
        self._say(f"{where}: started")
        try:
            outcome = self._run_job(job)
        except Exception as exc:
            self._say(f"{where}: runner error: {exc}")
            handle._fail(exc)
            return
        verdict = "Complete" if outcome.succeeded else f"Failed ({outcome.reason})"
        pods = f"{len(outcome.runs)} pod{'s' if len(outcome.runs) != 1 else ''}"
        self._say(f"{where}: {verdict}, exit code {outcome.last.exit_code}, {pods}")
        handle._add(outcome)

    def _say(self, line: str) -> None:
        if self.say is not None:
            self.say(line)

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
        pod_spec: JSON = job["spec"]["template"]["spec"]
        pod_name = f"{name[:50]}-{secrets.token_hex(3)[:5]}"
        run = JobRun(namespace=namespace, job=name, job_uid=uid, pod=pod_name)
        run.workdir = self.workdir / f"{namespace}.{pod_name}"
        run.workdir.mkdir(parents=True)
        inits: list[JSON] = list(pod_spec.get("initContainers") or [])
        mains: list[JSON] = list(pod_spec["containers"])
        self._create_pod(job, pod_name)
        started_at = _now()
        self._pod_status(namespace, pod_name, inits, mains, [], None, started_at)
        try:
            if len(mains) != 1:
                raise JobSetupError(f"{len(mains)} containers: the test runner runs exactly one")
            volumes = self._volumes(job, run.workdir)
        except (JobSetupError, KubeError) as exc:
            run.name = mains[0]["name"]
            self._fail_setup(run, exc)
            self._pod_status(namespace, pod_name, inits, mains, [], run, started_at)
            return run
        deadline = time.monotonic() + timeout
        for container in inits:
            init = ContainerRun(container["name"])
            run.init_containers.append(init)
            self._run_container(job, pod_name, container, init, volumes, run.workdir, deadline)
            self._pod_status(namespace, pod_name, inits, mains, run.init_containers, None,
                             started_at)  # fmt: skip
            if not init.succeeded:
                run.exit_code = init.exit_code
                return run
        run.name = mains[0]["name"]
        self._run_container(job, pod_name, mains[0], run, volumes, run.workdir, deadline)
        self._pod_status(namespace, pod_name, inits, mains, run.init_containers, run, started_at)
        return run

    def _fail_setup(self, container: ContainerRun, exc: Exception) -> None:
        container.setup_error = str(exc)
        container.exit_code = 128
        container.log = container.stderr = f"testenv job runner: {exc}\n"

    def _run_container(
        self,
        job: JSON,
        pod_name: str,
        container: JSON,
        run: ContainerRun,
        volumes: dict[str, Path],
        workdir: Path,
        deadline: float,
    ) -> None:
        namespace = job["metadata"]["namespace"]
        chunks: list[tuple[str, bytes]] = []
        chunk_lock = threading.Lock()

        def log_bytes() -> bytes:
            with chunk_lock:
                return b"".join(c for _, c in chunks)

        if self.kubelet is not None:
            self.kubelet.set_log(namespace, pod_name, container["name"], log_bytes)
        try:
            sandbox = self._prepare(job, pod_name, container, run, volumes, workdir)
        except (JobSetupError, SandboxError, KubeError) as exc:
            with chunk_lock:
                chunks.append(("stderr", f"testenv job runner: {exc}\n".encode()))
            self._fail_setup(run, exc)
            return
        run.exit_code = self._execute(sandbox, run, chunks, chunk_lock, deadline, workdir)
        with chunk_lock:
            run.stdout = b"".join(c for s, c in chunks if s == "stdout").decode(errors="replace")
            run.stderr = b"".join(c for s, c in chunks if s == "stderr").decode(errors="replace")
            log = b"".join(c for _, c in chunks)
        run.log = log.decode(errors="replace")
        written = run.mounts.get(termination_path(container))
        run.termination_message = termination_message(
            written.read_bytes() if written is not None and written.is_file() else b"",
            container.get("terminationMessagePolicy") or "File",
            run.exit_code,
            log,
        )

    def _create_pod(self, job: JSON, pod_name: str) -> None:
        namespace = job["metadata"]["namespace"]
        self.kube.create(f"/api/v1/namespaces/{namespace}/pods",
                         pod_for_job(job, pod_name, self._node_name))  # fmt: skip
        self._pods[(namespace, pod_name)] = job["metadata"]["uid"]

    @property
    def _node_name(self) -> str:
        return self.kubelet.node_name if self.kubelet else "testenv-node"

    def _pod_status(
        self,
        namespace: str,
        pod: str,
        inits: list[JSON],
        mains: list[JSON],
        init_runs: list[ContainerRun],
        main_run: ContainerRun | None,
        started_at: str,
    ) -> None:
        """Phase and container statuses as the kubelet reports them: Pending while init
        containers run (or one failed), Running, then Succeeded or Failed."""
        init_failed = any(r.exit_code not in (None, 0) for r in init_runs)
        init_done = len(init_runs) == len(inits) and not init_failed
        init_statuses = [
            _container_status(c, init_runs[i] if i < len(init_runs) else None, started_at,
                              waiting="PodInitializing")
            for i, c in enumerate(inits)
        ]  # fmt: skip
        main_waiting = "PodInitializing" if not init_done else "ContainerCreating"
        main_statuses = [
            _container_status(c, main_run, started_at, waiting=main_waiting,
                              running=init_done and main_run is None)
            for c in mains
        ]  # fmt: skip
        if main_run is not None and main_run.exit_code is not None:
            phase = "Succeeded" if main_run.succeeded else "Failed"
        elif init_failed:
            phase = "Failed"
        else:
            phase = "Running" if init_done else "Pending"
        status: JSON = {
            "phase": phase,
            "startTime": started_at,
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": "127.0.0.1",
            "containerStatuses": main_statuses,
        }
        if inits:
            status["initContainerStatuses"] = init_statuses
        try:
            self.kube.patch(f"/api/v1/namespaces/{namespace}/pods/{pod}/status", {"status": status})
        except KubeError as err:
            if err.code != 404:
                raise

    # Volumes, environment, the sandbox ----------------------------------------------------------
    def _volumes(self, job: JSON, workdir: Path) -> dict[str, Path]:
        """Every volume of the Pod as a local directory (shared by all its containers),
        plus the ServiceAccount token volume the admission plugin would have added."""
        namespace = job["metadata"]["namespace"]
        pod_spec: JSON = job["spec"]["template"]["spec"]
        volumes = {
            v["name"]: self._materialize(namespace, pod_spec, v, workdir / "volumes" / v["name"])
            for v in pod_spec.get("volumes") or []
        }
        if pod_spec.get("automountServiceAccountToken", True):
            volumes[SA_VOLUME] = self._materialize(
                namespace, pod_spec, SA_TOKEN_VOLUME, workdir / "volumes" / SA_VOLUME
            )
            (volumes[SA_VOLUME] / "namespace").write_text(namespace)
        return volumes

    def _service_account(self, namespace: str, pod_spec: JSON) -> str:
        name = service_account_name(pod_spec)
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
        sa = self.kube.get_or_none(f"{path}/{name}")
        if sa is None and name == "default":  # the ServiceAccount controller's part
            sa = self.kube.ensure(
                path, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
            )
        if sa is None:
            raise JobSetupError(
                f"ServiceAccount {namespace}/{name} does not exist (a real cluster would keep "
                "the Pod in ContainerCreating); create it before the Job"
            )
        return str(name)

    def _prepare(
        self,
        job: JSON,
        pod_name: str,
        container: JSON,
        run: ContainerRun,
        volumes: dict[str, Path],
        workdir: Path,
    ) -> list[str]:
        """The bwrap command line for ``container``, as :func:`~.podspec.plan_container`
        plans it; records the plan in ``run``."""
        namespace = job["metadata"]["namespace"]
        pod_spec: JSON = job["spec"]["template"]["spec"]
        image = self._image(container.get("image", ""))
        term = workdir / "containers" / container["name"] / "termination-log"
        term.parent.mkdir(parents=True)
        term.touch(mode=0o666)
        pod = PodFacts(
            namespace,
            pod_name,
            self._node_name,
            self._service_account(namespace, pod_spec),
            int(urlparse(self.cp.server).port or 443),
        )
        read_data = functools.partial(self._read_data, namespace)
        plan = plan_container(pod_spec, container, image, pod, volumes, term, read_data)
        run.argv, run.env, run.uid, run.gid = plan.argv, plan.env, plan.uid, plan.gid
        run.mounts = {m.target: m.source for m in plan.mounts}
        return bwrap_argv(
            image,
            plan.argv,
            plan.mounts,
            uid=plan.uid,
            gid=plan.gid,
            hostname=pod_name,
            working_dir=plan.working_dir,
            read_only_root=plan.read_only_root,
        )

    def _image(self, reference: str) -> Image:
        if reference == HOST_IMAGE:
            return self.host_image
        image = self.images.get(reference)
        if image is None:
            known = ", ".join(sorted([HOST_IMAGE, *self.images]))
            raise JobSetupError(
                f"image {reference!r} is not known to the test runner (a real kubelet would "
                f"report ErrImagePull); known: {known}"
            )
        return image

    def _read_data(self, namespace: str, kind: str, name: str, optional: bool) -> dict[str, bytes]:
        obj = self.kube.get_or_none(f"/api/v1/namespaces/{namespace}/{kind}/{name}")
        if obj is None:
            if optional:
                return {}
            raise JobSetupError(f"{kind} {namespace}/{name} not found")
        return object_data(kind, obj)

    def _materialize(self, namespace: str, pod_spec: JSON, volume: JSON, target: Path) -> Path:
        target.mkdir(parents=True, exist_ok=True)
        if "emptyDir" in volume:
            target.chmod(0o777)
            return target
        if "configMap" in volume or "secret" in volume:
            kind = "configmaps" if "configMap" in volume else "secrets"
            self._write_keys(namespace, volume.get("configMap") or volume["secret"], kind, target)
            return target
        if "projected" in volume:
            for source in volume["projected"].get("sources") or []:
                if "serviceAccountToken" in source:
                    spec = source["serviceAccountToken"]
                    token = self.cp.service_account_token(
                        namespace,
                        self._service_account(namespace, pod_spec),
                        int(spec.get("expirationSeconds", 3600)),
                    )
                    (target / spec["path"]).write_text(token)
                elif "configMap" in source or "secret" in source:
                    kind = "configmaps" if "configMap" in source else "secrets"
                    self._write_keys(namespace, source.get("configMap") or source["secret"],
                                     kind, target)  # fmt: skip
                else:
                    raise JobSetupError(f"projected volume source {list(source)} not supported")
            return target
        raise JobSetupError(
            f"volume {volume['name']!r}: only configMap, secret, projected and emptyDir "
            "volumes are supported"
        )

    def _write_keys(self, namespace: str, src: JSON, kind: str, target: Path) -> None:
        name = str(src.get("name") or src.get("secretName"))
        if kind == "configmaps" and name == "kube-root-ca.crt":  # the root CA publisher's part
            data = {"ca.crt": self.cp.pki.ca_cert.read_bytes()}
        else:
            data = self._read_data(namespace, kind, name, bool(src.get("optional")))
        for rel, content, mode in key_files(src, kind, data):
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(content)
            dest.chmod(mode)

    def _execute(
        self,
        argv: list[str],
        run: ContainerRun,
        chunks: list[tuple[str, bytes]],
        lock: threading.Lock,
        deadline: float,
        workdir: Path,
    ) -> int:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env=run.env,  # bwrap passes its environment to the container's process
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
            code = proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        reader.join(timeout=10)
        with self._lock:
            self._procs.discard(proc)
        return code


def _container_status(
    container: JSON,
    run: ContainerRun | None,
    started_at: str,
    *,
    waiting: str,
    running: bool = False,
) -> JSON:
    cs: JSON = {
        "name": container["name"],
        "image": container.get("image") or "local",
        "imageID": "",
        "restartCount": 0,
        "ready": False,
        "started": False,
    }
    if run is not None and run.exit_code is not None:
        code = run.exit_code if run.exit_code >= 0 else 137
        terminated: JSON = {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started_at,
            "finishedAt": _now(),
        }
        if run.termination_message:
            terminated["message"] = run.termination_message
        cs["state"] = {"terminated": terminated}
    elif running:
        cs.update(ready=True, started=True, state={"running": {"startedAt": started_at}})
    else:
        cs["state"] = {"waiting": {"reason": waiting}}
    return cs


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
