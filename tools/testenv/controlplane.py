"""etcd + kube-apiserver on loopback, with RBAC, token users and service-account tokens.

One :class:`ControlPlane` is one throw-away cluster: free loopback ports, a temporary
directory for data, keys, logs and kubeconfigs, and a teardown that leaves no process
behind (children also get ``PR_SET_PDEATHSIG`` so a killed pytest takes them along).
Nothing leaves the machine: the processes start without proxy variables, and the apiserver
dials webhooks, aggregated APIs and kubelets through :class:`~.egress.LoopbackEgress`, which
refuses anything that is not loopback.
There is no controller-manager, scheduler or kubelet: nothing reconciles anything
(namespaces are never finalized, Jobs never run by themselves; see :mod:`.jobrunner`).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .binaries import Binaries
from .egress import LoopbackEgress, egress_selector_config, without_proxies
from .kube import JSON, Kube, KubeError, wait_for
from .pki import Pki, make_pki

ADMIN_USER = "testenv-admin"  # in group system:masters
RESTRICTED_USERS = ("restricted-alice", "restricted-bob")  # authenticated, no RBAC rules at all
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"


@dataclass(frozen=True)
class User:
    name: str
    token: str
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServiceAccount:
    namespace: str
    name: str
    token: str  # from the TokenRequest API
    kubeconfig: Path

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.name}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


WORKDIR_PREFIX = "ug-testenv-"


class _PortTaken(RuntimeError):
    pass


def _remove_orphaned_workdirs() -> None:
    """Remove work dirs left by a test process that was killed (SIGKILL skips teardown;
    its etcd and kube-apiserver died with it through PR_SET_PDEATHSIG)."""
    for path in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        try:
            pid = int((path / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:
            continue


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class ControlPlane:
    binaries: Binaries
    workdir: Path | None = None
    extra_apiserver_flags: Sequence[str] = ()
    # UG_TESTENV_KEEP=1 keeps data, keys, logs and kubeconfigs for a post-mortem.
    keep_workdir: bool = field(default_factory=lambda: bool(os.environ.get("UG_TESTENV_KEEP")))

    # Set by start()
    server: str = field(init=False, default="")
    pki: Pki = field(init=False)
    users: dict[str, User] = field(init=False, default_factory=dict)
    admin: Kube = field(init=False)
    admin_kubeconfig: Path = field(init=False)
    startup_seconds: float = field(init=False, default=0.0)
    etcd_url: str = field(init=False, default="")
    egress: LoopbackEgress | None = field(init=False, default=None)
    _procs: list[tuple[str, subprocess.Popen[bytes], Path]] = field(
        init=False, default_factory=list
    )
    _own_workdir: bool = field(init=False, default=False)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) etcd and kube-apiserver have used so far."""
        ticks = 0
        for _, proc, _ in self._procs:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    # Lifecycle ----------------------------------------------------------------------------
    def start(self, timeout: float = 120.0) -> ControlPlane:
        """Start etcd and kube-apiserver and wait for /readyz. A free port taken by someone
        else between choosing and binding it is retried (twice) with new ports."""
        t0 = time.monotonic()
        for attempt in range(3):
            try:
                self._start_once(deadline=t0 + timeout)
                break
            except _PortTaken:
                if attempt == 2:
                    raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _start_once(self, deadline: float) -> None:
        own = self.workdir is None
        if self.workdir is None:
            _remove_orphaned_workdirs()
            self.workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
            (self.workdir / "owner.pid").write_text(str(os.getpid()))
            self._own_workdir = True
        wd = self.workdir
        atexit.register(self.stop)
        try:
            self.pki = make_pki(wd / "pki")
            self._write_users(wd / "tokens.csv")
            self._start_etcd(wd)
            self._start_apiserver(wd)
            self.admin = Kube(self.server, self.users[ADMIN_USER].token, self.pki.ca_cert)
            self.admin_kubeconfig = self.write_kubeconfig(
                wd / "kubeconfigs" / "admin.yaml", ADMIN_USER, self.users[ADMIN_USER].token
            )
            self._wait_ready(deadline=deadline)
        except BaseException:
            self.stop(grace=2.0)
            if own:
                self.workdir = None
                self._own_workdir = False
            raise

    def stop(self, grace: float = 15.0) -> None:
        """Stop kube-apiserver, then etcd; remove the work dir. Safe to call twice."""
        for _name, proc, _log in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)
        self._procs.clear()
        if self.egress is not None:
            self.egress.close()
            self.egress = None
        if self._own_workdir and self.workdir and not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return bool(self._procs) and all(p.poll() is None for _, p, _ in self._procs)

    # Start-up details -----------------------------------------------------------------------
    def _write_users(self, path: Path) -> None:
        self.users = {ADMIN_USER: User(ADMIN_USER, secrets.token_hex(16), ("system:masters",))}
        for name in RESTRICTED_USERS:
            self.users[name] = User(name, secrets.token_hex(16))
        rows = [
            f'{u.token},{u.name},{u.name},"{",".join(u.groups)}"'
            if u.groups
            else f"{u.token},{u.name},{u.name}"
            for u in self.users.values()
        ]
        path.write_text("\n".join(rows) + "\n")
        path.chmod(0o600)

    def _spawn(self, name: str, argv: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=without_proxies(),
                preexec_fn=_die_with_parent,  # called from the main thread
                start_new_session=True,
            )
        self._procs.append((name, proc, log))
        return proc

    def _start_etcd(self, wd: Path) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        peer_url = f"http://127.0.0.1:{peer}"
        self._spawn(
            "etcd",
            [
                str(self.binaries.etcd),
                "--name=testenv",
                f"--data-dir={wd / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=testenv={peer_url}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            wd / "etcd.log",
        )

    def _start_apiserver(self, wd: Path) -> None:
        port = free_port()
        self.server = f"https://127.0.0.1:{port}"
        p = self.pki
        self.egress = LoopbackEgress(wd / "egress.sock")
        egress_config = wd / "egress-selector.yaml"
        egress_config.write_text(egress_selector_config(self.egress.path))
        self._spawn(
            "kube-apiserver",
            [
                str(self.binaries.kube_apiserver),
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={wd / 'apiserver-certs'}",
                f"--tls-cert-file={p.serving_cert}",
                f"--tls-private-key-file={p.serving_key}",
                "--authorization-mode=RBAC",
                f"--token-auth-file={wd / 'tokens.csv'}",
                f"--service-account-issuer={self.server}",
                f"--service-account-key-file={p.sa_pub}",
                f"--service-account-signing-key-file={p.sa_key}",
                f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                "--endpoint-reconciler-type=none",
                "--disable-admission-plugins=ServiceAccount",
                "--allow-privileged=true",
                "--enable-priority-and-fairness=false",
                "--kubelet-preferred-address-types=InternalIP",
                "--profiling=false",
                f"--egress-selector-config-file={egress_config}",
                *self.extra_apiserver_flags,
            ],
            wd / "kube-apiserver.log",
        )

    def _check_alive(self) -> None:
        for name, proc, log in self._procs:
            if proc.poll() is not None:
                if "address already in use" in _tail(log):
                    raise _PortTaken(f"{name}: a chosen port was taken meanwhile")
                raise RuntimeError(
                    f"{name} exited with {proc.returncode} during start-up; last lines of {log}:\n"
                    + _tail(log)
                )

    def _wait_ready(self, deadline: float) -> None:
        last = ""
        while True:
            self._check_alive()
            try:
                text = self.admin.request("GET", "/readyz", raw=True)
                if text.strip() == "ok" and self.admin.get_or_none("/api/v1/namespaces/default"):
                    return
            except KubeError as err:
                last = str(err)
            except Exception as err:  # connection refused while starting
                last = repr(err)
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {log}\n{_tail(log)}" for _, _, log in self._procs)
                raise TimeoutError(f"kube-apiserver not ready in time ({last})\n{logs}")
            time.sleep(0.2)

    # Clients and kubeconfigs ----------------------------------------------------------------
    def write_kubeconfig(
        self, path: Path, user: str, token: str, namespace: str | None = None
    ) -> Path:
        ca = base64.b64encode(self.pki.ca_cert.read_bytes()).decode()
        context: JSON = {"cluster": "testenv", "user": user}
        if namespace:
            context["namespace"] = namespace
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "testenv",
                    "cluster": {"server": self.server, "certificate-authority-data": ca},
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "testenv", "context": context}],
            "current-context": "testenv",
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        path.chmod(0o600)
        return path

    def client_for(self, user: str) -> Kube:
        """REST client for a token user of the token file (admin or a restricted user)."""
        return Kube(self.server, self.users[user].token, self.pki.ca_cert)

    def client_for_token(self, token: str) -> Kube:
        return Kube(self.server, token, self.pki.ca_cert)

    def kubeconfig_for(self, user: str) -> Path:
        assert self.workdir is not None
        return self.write_kubeconfig(
            self.workdir / "kubeconfigs" / f"{user}.yaml", user, self.users[user].token
        )

    @staticmethod
    def api_client(kubeconfig: Path) -> Any:
        """An official ``kubernetes.client.ApiClient`` for a kubeconfig."""
        from kubernetes import config

        new_client: Any = config.new_client_from_config
        return new_client(config_file=str(kubeconfig))

    # Service accounts -----------------------------------------------------------------------
    def service_account_token(
        self, namespace: str, name: str, expiration_seconds: int = 3600
    ) -> str:
        review = self.admin.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": expiration_seconds},
            },
        )
        return str(review["status"]["token"])

    def make_service_account(
        self,
        namespace: str,
        rules: Sequence[JSON] = (),
        *,
        name: str | None = None,
        cluster_rules: Sequence[JSON] = (),
        expiration_seconds: int = 3600,
    ) -> ServiceAccount:
        """A ServiceAccount bound to a Role with ``rules`` (and a ClusterRole with
        ``cluster_rules``, for cluster-scoped resources such as CRDs); returns its
        TokenRequest token and a kubeconfig using it (context namespace = ``namespace``).
        Waits until the authorizer allows the first verb of every rule."""
        name = name or f"sa-{secrets.token_hex(3)}"
        a = self.admin
        a.ensure_namespace(namespace)
        a.ensure(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
        )
        subject = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        if rules:
            a.ensure(
                f"{rbac}/namespaces/{namespace}/roles",
                {"kind": "Role", "metadata": {"name": name}, "rules": list(rules)},
            )
            a.ensure(
                f"{rbac}/namespaces/{namespace}/rolebindings",
                {
                    "kind": "RoleBinding",
                    "metadata": {"name": name},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Role",
                        "name": name,
                    },
                    "subjects": subject,
                },
            )
        if cluster_rules:
            cname = f"testenv:{namespace}:{name}"
            a.ensure(
                f"{rbac}/clusterroles",
                {"kind": "ClusterRole", "metadata": {"name": cname}, "rules": list(cluster_rules)},
            )
            a.ensure(
                f"{rbac}/clusterrolebindings",
                {
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": cname},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": cname,
                    },
                    "subjects": subject,
                },
            )
        user = f"system:serviceaccount:{namespace}:{name}"
        for rule, ns in [(r, namespace) for r in rules] + [(r, None) for r in cluster_rules]:
            self._wait_allowed(user, rule, ns)
        token = self.service_account_token(namespace, name, expiration_seconds)
        assert self.workdir is not None
        kubeconfig = self.write_kubeconfig(
            self.workdir / "kubeconfigs" / f"sa-{namespace}-{name}.yaml", user, token, namespace
        )
        return ServiceAccount(namespace, name, token, kubeconfig)

    def _wait_allowed(self, user: str, rule: JSON, namespace: str | None) -> None:
        """RBAC is served from informers: wait until the new binding is visible."""
        if not rule.get("resources") or not rule.get("verbs"):
            return
        attrs: JSON = {
            "group": (rule.get("apiGroups") or [""])[0],
            "resource": rule["resources"][0],
            "verb": rule["verbs"][0],
        }
        if namespace:
            attrs["namespace"] = namespace
        if rule.get("resourceNames"):
            attrs["name"] = rule["resourceNames"][0]
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", "system:authenticated"],
                "resourceAttributes": attrs,
            },
        }
        wait_for(
            lambda: self.admin.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)[
                "status"
            ].get("allowed"),
            timeout=10,
            what=f"RBAC to allow {user} {attrs}",
        )
