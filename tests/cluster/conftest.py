"""Fixtures for tests against a real kube-apiserver + etcd, helm and kubectl.

Every test under tests/cluster/ is marked ``cluster``. The binaries come from
``tools/kube-testenv/build.sh`` (cache dir, or ``$UG_TESTENV_BIN``). When they are
missing the tests are skipped with one line saying how to build them, except under
``CI=true``, where a missing binary or a control plane that does not start fails the run.
One control plane serves the whole session; each test works in its own namespace. The truth
rows that differ by minor also run on a second kube-apiserver, the oldest minor
(``oldest_cluster``, started the first time a test asks for it; ``cluster_at(minor)``).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import prerequisites  # noqa: E402
from testenv import (  # noqa: E402
    BUILD_COMMAND,
    GUARD_IMAGE,
    MINORS,
    NEWEST_MINOR,
    OLDEST_BUILD_COMMAND,
    OLDEST_MINOR,
    Binaries,
    Cluster,
    ControlPlane,
    FakeKubelet,
    FaultProxy,
    Image,
    JobRunner,
    ToolRunner,
    built_guard_image,
    find_binaries,
    find_oldest_binaries,
)

HERE = Path(__file__).resolve().parent
CHARTS = HERE / "charts"
VENV_BIN = REPO / ".venv" / "bin"
IN_CI = os.environ.get("CI", "").lower() == "true"
_STARTUP_KEY = pytest.StashKey[str]()
_OLDEST_STARTUP_KEY = pytest.StashKey[str]()


def _missing_message(binaries: Binaries) -> str | None:
    missing = binaries.missing()
    if not missing:
        return None
    return (
        f"cluster tests: {', '.join(missing)} not built in {binaries.bin_dir}; "
        f"enable them with `{BUILD_COMMAND}` (needs Go >= 1.25; ~4 min once, then cached)"
    )


_SKIPPED_KEY = pytest.StashKey[str]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests/cluster tests ``cluster``. Without the binaries (and not under CI=true)
    leave them out of the run and say so in one line at the end."""
    ours = [i for i in items if HERE in Path(str(i.fspath)).resolve().parents]
    for item in ours:
        item.add_marker(pytest.mark.cluster)
    message = _missing_message(find_binaries())
    if ours and message and not IN_CI:
        config.hook.pytest_deselected(items=ours)
        items[:] = [i for i in items if i not in ours]
        config.stash[_SKIPPED_KEY] = f"SKIPPED {len(ours)} {message}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    for key in (_SKIPPED_KEY, _STARTUP_KEY, _OLDEST_STARTUP_KEY):
        line = config.stash.get(key, None)
        if line:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Only cluster tests were asked for and all were left out: not an error outside CI.
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _SKIPPED_KEY in session.config.stash:
        session.exitstatus = pytest.ExitCode.OK


@pytest.fixture(scope="session")
def testenv_binaries() -> Binaries:
    """The binaries, or one skip line for every cluster test (a failure under CI=true)."""
    binaries = find_binaries()
    message = _missing_message(binaries)
    if message:
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return binaries


@pytest.fixture(autouse=True)
def _requires_testenv(testenv_binaries: Binaries) -> None:
    """Every test in tests/cluster needs the binaries (fails under CI=true without them)."""


def _started(
    binaries: Binaries, pytestconfig: pytest.Config, key: pytest.StashKey[str]
) -> Iterator[ControlPlane]:
    cp = ControlPlane(binaries)
    try:
        cp.start()
    except Exception as exc:
        pytest.fail(f"test control plane did not start: {exc}", pytrace=False)
    version = cp.admin.get("/version")["gitVersion"]
    line = (
        f"testenv: etcd + kube-apiserver {version} ready in {cp.startup_seconds:.1f}s "
        f"at {cp.server}"
    )
    pytestconfig.stash[key] = line
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def control_plane(
    testenv_binaries: Binaries, pytestconfig: pytest.Config
) -> Iterator[ControlPlane]:
    yield from _started(testenv_binaries, pytestconfig, _STARTUP_KEY)


@pytest.fixture(scope="session")
def fake_kubelet(control_plane: ControlPlane) -> Iterator[FakeKubelet]:
    kubelet = FakeKubelet(control_plane).start()
    try:
        yield kubelet
    finally:
        kubelet.stop()


def _cluster(control_plane: ControlPlane, binaries: Binaries) -> Cluster:
    return Cluster(
        venv_bin=VENV_BIN,
        control_plane=control_plane,
        binaries=binaries,
        kubeconfig=control_plane.admin_kubeconfig,
        admin=control_plane.admin,
        api_client=control_plane.api_client(control_plane.admin_kubeconfig),
    )


@pytest.fixture(scope="session")
def cluster(control_plane: ControlPlane, testenv_binaries: Binaries) -> Cluster:
    """Session-wide: admin kubeconfig, admin clients, ``make_service_account``."""
    return _cluster(control_plane, testenv_binaries)


@pytest.fixture(scope="session")
def oldest_cluster(testenv_binaries: Binaries, pytestconfig: pytest.Config) -> Iterator[Cluster]:
    """A second control plane, the oldest minor's kube-apiserver (with the first build's etcd,
    helm and kubectl), the same flags, RBAC and loopback-only egress; its own etcd."""
    binaries = find_oldest_binaries()
    missing = binaries.missing()
    if missing:
        message = (
            f"kube-apiserver v{OLDEST_MINOR} not built in {binaries.apiserver_dir}; "
            f"enable it with `{OLDEST_BUILD_COMMAND}` (~4 min once, then cached)"
        )
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    for control_plane in _started(binaries, pytestconfig, _OLDEST_STARTUP_KEY):
        yield _cluster(control_plane, binaries)


@pytest.fixture
def cluster_at(request: pytest.FixtureRequest) -> Callable[[str], Cluster]:
    """``cluster_at(minor)``: the session's cluster of that minor (one of ``MINORS``),
    started the first time it is asked for."""

    def at(minor: str) -> Cluster:
        assert minor in MINORS, minor
        fixture = "cluster" if minor == NEWEST_MINOR else "oldest_cluster"
        found: Cluster = request.getfixturevalue(fixture)
        return found

    return at


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> str:
    """A fresh namespace per test (never deleted: no namespace controller runs)."""
    base = request.node.name.removeprefix("test_").replace("_", "-").lower()
    base = "".join(c for c in base if c.isalnum() or c == "-")[:40].strip("-")
    name = f"{base}-{secrets.token_hex(3)}"
    cluster.admin.ensure_namespace(name)
    return name


@pytest.fixture(scope="session")
def guard_image() -> Image:
    """The image built from this checkout (``GUARD_IMAGE`` in a Job); skip without it
    (a failure under CI=true, where tools/test.sh builds it first)."""
    return prerequisites.guard_image()


@pytest.fixture
def job_runner(cluster: Cluster, fake_kubelet: FakeKubelet, tmp_path: Path) -> Iterator[JobRunner]:
    """Plays kubelet + Job controller for the Jobs a test names with ``expect(ns, name)``:
    ``GUARD_IMAGE`` (when built) and ``testenv/host`` run under bwrap."""
    image = built_guard_image()
    runner = JobRunner(
        cluster.control_plane,
        fake_kubelet,
        tmp_path / "jobs",
        images={GUARD_IMAGE: image} if image else {},
        path_prepend=[VENV_BIN, cluster.binaries.bin_dir],
    ).start()
    try:
        yield runner
    finally:
        runner.stop()


@pytest.fixture(scope="session")
def helm_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("helm-home")


def _helm_env(cluster: Cluster, helm_home: Path, kubeconfig: Path | None) -> dict[str, str]:
    """The cluster's environment with the test session's helm home."""
    env = cluster.env(kubeconfig)
    for var, sub in (
        ("HELM_CACHE_HOME", "cache"),
        ("HELM_CONFIG_HOME", "config"),
        ("HELM_DATA_HOME", "data"),
    ):
        env[var] = str(helm_home / sub)
    return env


@pytest.fixture
def helm(cluster: Cluster, helm_home: Path) -> ToolRunner:
    """``helm(*args, kubeconfig=None, timeout=180)`` -> CompletedProcess (not checked)."""

    def run(
        *args: str, kubeconfig: Path | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(cluster.binaries.helm), *args],
            env=_helm_env(cluster, helm_home, kubeconfig),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture(scope="session")
def helm_guard_plugin(cluster: Cluster, helm_home: Path) -> None:
    """`helm plugin install` of helm-guard from the repository, once for the session's
    helm home."""
    done = subprocess.run(
        [str(cluster.binaries.helm), "plugin", "install", str(REPO / "helm-guard")],
        env=_helm_env(cluster, helm_home, None),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"


@pytest.fixture
def shell(cluster: Cluster, helm_home: Path, tmp_path: Path) -> ToolRunner:
    """``shell(command)``: a command line as a person types it (``&&``, ``>``), run by bash
    in a scratch folder with helm, kubectl and upgrade-guard on PATH, helm's home the
    test's, against the test cluster (not checked)."""
    folder = tmp_path / "shell"
    folder.mkdir(exist_ok=True)

    def run(
        *command: str, kubeconfig: Path | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        env = _helm_env(cluster, helm_home, kubeconfig)
        env["PATH"] = os.pathsep.join([str(cluster.binaries.bin_dir), str(VENV_BIN), env["PATH"]])
        return subprocess.run(
            ["bash", "-c", " ".join(command)],
            env=env,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def kubectl(cluster: Cluster) -> ToolRunner:
    """``kubectl(*args, kubeconfig=None)`` -> CompletedProcess (not checked)."""

    def run(
        *args: str, kubeconfig: Path | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(cluster.binaries.kubectl), *args],
            env=cluster.env(kubeconfig),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def proxy(cluster: Cluster, tmp_path: Path) -> Iterator[FaultProxy]:
    """A FaultProxy in front of the apiserver: it relays, records, and fails on request."""
    control_plane = cluster.control_plane
    proxy = FaultProxy(control_plane.server, control_plane.pki.ca_cert, tmp_path / "proxy-pki")
    try:
        yield proxy
    finally:
        proxy.close()
