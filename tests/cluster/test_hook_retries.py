"""The hook's retries held to real HTTP. A FaultProxy relays every request (bearer token
included) to the real apiserver and its real answers back, with exactly the RBAC the chart
grants, except the requests a test tells it to answer itself with a 429 + Retry-After, a 503
or a 500, worded as the apiserver words them. What the proxy saw proves the retries, the
waits and that a refusal is asked once."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from test_hook import (
    CRD_RESOURCE,
    STRING,
    apply,
    guard_account,
    new_group,
    release_record,
    run_hook,
    run_release_hook,
    widget_crd,
)
from test_hook_evidence import store

from testenv import JSON, Cluster, Fault, FaultProxy, Kube, KubeError, wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
GET_CRD = "get customresourcedefinitions.apiextensions.k8s.io"


def safe_upgrade(cluster: Cluster, namespace: str, proxy: FaultProxy,
                 tmp_path: Path) -> tuple[Path, JSON]:  # fmt: skip
    """A live CRD, a chart adding a field to it, and the chart's account through the proxy."""
    group = new_group()
    apply(cluster, widget_crd(group, {"a": STRING}))
    chart = widget_crd(group, {"a": STRING, "b": STRING})
    account = guard_account(cluster, namespace, [chart])
    return proxy.kubeconfig(account, tmp_path / "through-proxy.yaml"), chart


RETRIED = [
    # (id, fault on the CRD's GET, statuses the proxy answered it with, in order)
    ("429 twice, Retry-After 1", Fault(429, CRDS, times=2, retry_after=1), [429, 429, 200]),
    ("500 once", Fault(500, CRDS, times=1), [500, 200]),
    ("503 once", Fault(503, CRDS, times=1), [503, 200]),
    ("no fault", None, [200]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "statuses"), [c[1:] for c in RETRIED], ids=[c[0] for c in RETRIED]
)
def test_a_passing_failure_is_retried_to_the_right_verdict(
    cluster: Cluster, namespace: str, proxy: FaultProxy, tmp_path: Path, fault: Fault | None,
    statuses: list[int],
) -> None:  # fmt: skip
    kubeconfig, chart = safe_upgrade(cluster, namespace, proxy, tmp_path)
    if fault:
        proxy.inject(fault)
    run = run_hook(kubeconfig, [chart], tmp_path)
    assert run.code == 0 and run.stdout.startswith("upgrade-guard SAFE"), run
    gets = proxy.seen(CRDS)
    assert [g.status for g in gets] == statuses, gets
    assert [g.injected for g in gets] == [True] * (len(statuses) - 1) + [False], gets
    # /version once, then the CRD until it answered: the hook counts the same requests
    assert f"in {1 + len(statuses)} requests" in run.stdout, run
    if fault and fault.retry_after:
        waits = [b.received - a.answered for a, b in itertools.pairwise(gets)]
        assert min(waits) >= fault.retry_after, waits  # never sooner than Retry-After


def test_a_lasting_503_exits_3_at_the_deadline_naming_the_status(
    cluster: Cluster, namespace: str, proxy: FaultProxy, tmp_path: Path
) -> None:
    kubeconfig, chart = safe_upgrade(cluster, namespace, proxy, tmp_path)
    proxy.inject(Fault(503, CRDS))
    run = run_hook(kubeconfig, [chart], tmp_path, "--timeout", "5")
    assert run.code == 3, run
    assert f"cannot {GET_CRD} '{chart['metadata']['name']}'" in run.stderr, run
    assert "gave up at the deadline" in run.stderr and "last: HTTP 503" in run.stderr, run
    assert run.termination.startswith("upgrade-guard CANNOT DECIDE (exit 3)"), run
    gets = proxy.seen(CRDS)
    assert len(gets) >= 3 and all(g.injected and g.status == 503 for g in gets), gets


def test_a_retry_after_past_the_deadline_gives_up_at_once(
    cluster: Cluster, namespace: str, proxy: FaultProxy, tmp_path: Path
) -> None:
    kubeconfig, chart = safe_upgrade(cluster, namespace, proxy, tmp_path)
    proxy.inject(Fault(429, CRDS, retry_after=600))
    run = run_hook(kubeconfig, [chart], tmp_path, "--timeout", "60")
    assert run.code == 3, run
    assert "asked to retry after 600s, past the deadline" in run.stderr, run
    assert "HTTP 429: Too many requests" in run.stderr, run
    assert len(proxy.seen(CRDS)) == 1, proxy.seen(CRDS)
    assert run.seconds < 60, run.seconds  # not waited out to the deadline


def test_refusals_are_asked_once(cluster: Cluster, namespace: str, proxy: FaultProxy,
                                 tmp_path: Path) -> None:  # fmt: skip
    """Real answers: 200 for the CRD the account may get, 404 for one it may get that the
    cluster lacks (new), 403 for one it may not get; nothing is retried."""
    group = new_group()
    present = widget_crd(group, {"a": STRING})
    apply(cluster, present)
    new, forbidden = widget_crd(new_group(), {"a": STRING}), widget_crd(new_group(), {"a": STRING})
    account = guard_account(cluster, namespace, [present, new])
    kubeconfig = proxy.kubeconfig(account, tmp_path / "through-proxy.yaml")
    run = run_hook(kubeconfig, [present, new, forbidden], tmp_path)
    assert run.code == 3, run
    assert f"forbidden: the credentials may not {GET_CRD} '{forbidden['metadata']['name']}'" \
        in run.stderr, run  # fmt: skip
    for crd, status in ((present, 200), (new, 404), (forbidden, 403)):
        gets = proxy.seen(CRDS + crd["metadata"]["name"])
        assert [(g.status, g.injected) for g in gets] == [(status, False)], gets


def test_rejected_credentials_are_asked_once(
    cluster: Cluster, namespace: str, proxy: FaultProxy, tmp_path: Path
) -> None:
    kubeconfig, chart = safe_upgrade(cluster, namespace, proxy, tmp_path)
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-a-token"
    kubeconfig.write_text(yaml.safe_dump(config))
    run = run_hook(kubeconfig, [chart], tmp_path)
    assert run.code == 3 and "unauthorized" in run.stderr, run
    assert [(s.path, s.status) for s in proxy.seen()] == [("/version", 401)], proxy.seen()


@pytest.mark.parametrize(("fault", "statuses"), [
    (Fault(429, "/version", times=2, retry_after=1), [429, 429, 200]),
    (Fault(503, "/version", times=1, retry_after=1), [503]),
])  # fmt: skip
def test_the_test_client_waits_out_only_a_429(
    cluster: Cluster, proxy: FaultProxy, fault: Fault, statuses: list[int]
) -> None:
    """The tests' own client retries a 429 as client-go does (after a CRD changes, its
    storage answers 'storage is (re)initializing' for a moment), and nothing else."""
    proxy.inject(fault)
    kube = Kube(proxy.server, cluster.admin.token, proxy.ca_cert)
    try:
        kube.get("/version")
    except KubeError as error:
        assert error.code == statuses[-1], error
    # the proxy records a request once its answer is sent, which the client may read first
    wait_for(
        lambda: len(proxy.seen("/version")) == len(statuses), timeout=5, what="the proxy's record"
    )
    assert [s.status for s in proxy.seen("/version")] == statuses


def test_one_session_makes_and_counts_every_request(
    cluster: Cluster, namespace: str, proxy: FaultProxy, tmp_path: Path
) -> None:
    """The release records, the live CRDs, the objects of a CRD Helm would delete and the
    evidence's listing all go through one session: the report counts what the proxy saw."""
    group = new_group()
    kept, dropped = widget_crd(group, {"mode": STRING}), widget_crd(new_group(), {"a": STRING})
    tightened = widget_crd(group, {"mode": {**STRING, "enum": ["b"]}})
    apply(cluster, kept, dropped)
    store(cluster, namespace, kept, {"w": {"mode": "a"}})
    store(cluster, namespace, dropped, {"w": {"a": "x"}})
    for revision, status, crds in ((1, "deployed", [kept, dropped]),
                                   (2, "pending-upgrade", [tightened])):  # fmt: skip
        cluster.admin.create(
            f"/api/v1/namespaces/{namespace}/secrets",
            release_record(namespace, revision, status, crds),
        )
    names = [c["metadata"]["name"] for c in (kept, dropped)]
    account = cluster.make_service_account(
        namespace,
        [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
          "resourceNames": [f"sh.helm.release.v1.rel.v{n}" for n in (1, 2, 3)]}],
        cluster_rules=[{**CRD_RESOURCE, "verbs": ["get"], "resourceNames": names},
                       *({"apiGroups": [c["spec"]["group"]], "resources": ["widgets"],
                          "verbs": ["list"]} for c in (kept, dropped))],
    )  # fmt: skip
    kubeconfig = proxy.kubeconfig(account, tmp_path / "through-proxy.yaml")
    run = run_release_hook(kubeconfig, namespace, names, tmp_path)
    assert run.code == 1 and run.codes() == {"UG207", "UG608"}, run
    assert "evidence: 1 of 1 widgets affected" in run.stdout, run
    counted = f"the proxy's record of the requests the report counts ({proxy.seen()})"
    wait_for(lambda: f"in {len(proxy.seen())} requests" in run.stdout, timeout=5, what=counted)
    paths = {s.path.split("?")[0] for s in proxy.seen()}
    assert {"/version", f"{CRDS}{names[0]}", f"{CRDS}{names[1]}"} <= paths, paths
    assert any("/secrets/sh.helm.release.v1.rel.v" in p for p in paths), paths
    assert f"/apis/{group}/v1/widgets" in paths, paths
