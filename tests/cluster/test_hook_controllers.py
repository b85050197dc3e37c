"""`upgrade-guard hook` and what stored objects carry (issue 24), against the real
apiserver with the chart's RBAC only (`get` on the CRD, `list` on its objects): a finalizer
the release retires refuses while an object carries it, a condition type it drops warns,
and the objects are listed once for every check that reads them. Each verdict beside the
nearest one the objects decide the other way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_hook import STRING, apply, guard_account, new_group, run_hook, widget_crd

from testenv import Cluster, FaultProxy

OLD, NEW = "example.io/cleanup", "example.io/cleanup-v2"


def policy_file(tmp_path: Path, group: str, **controller: Any) -> str:
    path = tmp_path / "policy.yaml"
    entry = {"crd": f"widgets.{group}", **controller}
    path.write_text(yaml.safe_dump({"controllers": [entry]}))
    return str(path)


RENAMED = {
    "finalizers": [NEW],
    "retired-finalizers": [{"finalizer": OLD, "migration": "swapped on reconcile"}],
}


def store(cluster: Cluster, namespace: str, group: str, name: str, *, finalizers: list[str],
          conditions: tuple[str, ...] = ()) -> str:  # fmt: skip
    """A Widget carrying these finalizers and condition types (written through /status)."""
    widgets = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    body = {"apiVersion": f"{group}/v1", "kind": "Widget",
            "metadata": {"name": name, "finalizers": finalizers},
            "spec": {"a": "SecretValue"}}  # fmt: skip
    cluster.admin.create(widgets, body)
    if conditions:
        status = {"conditions": [{"type": t, "status": "True"} for t in conditions]}
        cluster.admin.patch(f"{widgets}/{name}/status", {"status": status})
    return f"{widgets}/{name}"


@pytest.fixture
def release_finalizers(cluster: Cluster) -> Iterator[list[str]]:
    """Objects a test stored with finalizers: freed at the end (no controller runs here)."""
    paths: list[str] = []
    yield paths
    for path in paths:
        if cluster.admin.get_or_none(path) is not None:
            cluster.admin.patch(path, {"metadata": {"finalizers": None}})


@pytest.mark.parametrize("carried", [True, False], ids=["an object carries it", "none does"])
def test_a_retired_finalizer_on_a_stored_object_refuses(
    cluster: Cluster, namespace: str, tmp_path: Path, release_finalizers: list[str],
    carried: bool,
) -> None:  # fmt: skip
    group = new_group()
    crd = widget_crd(group, {"a": STRING})
    apply(cluster, crd)
    old = store(cluster, namespace, group, "old", finalizers=[OLD] if carried else [])
    new = store(cluster, namespace, group, "new", finalizers=[NEW])
    release_finalizers.extend([old, new])
    account = guard_account(cluster, namespace, [crd], (f"widgets.{group}",))
    policy = policy_file(tmp_path, group, **RENAMED)
    run = run_hook(account, [crd], tmp_path, "--policy", policy)
    assert run.code == (1 if carried else 0), run
    assert ("UG611" in run.codes()) is carried, run
    if carried:
        expected = (
            f"1 stored object(s) carry finalizer {OLD}, which this release no longer handles:"
            f" {namespace}/old; deleting them never finishes"
        )
        assert expected in " ".join(run.stdout.split()), run
        assert "UG611" in run.termination, run
    assert "SecretValue" not in run.stdout + run.termination, run
    # What the finding says, the apiserver does: deleting the object only marks it; with no
    # controller left to remove the finalizer it stays, Terminating (without one it goes).
    cluster.admin.delete(old)
    left = cluster.admin.get_or_none(old)
    assert (left is not None and "deletionTimestamp" in left["metadata"]) is carried, left


def test_without_list_permission_the_guard_cannot_tell_and_refuses(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    group = new_group()
    crd = widget_crd(group, {"a": STRING})
    apply(cluster, crd)
    account = guard_account(cluster, namespace, [crd])
    run = run_hook(account, [crd], tmp_path, "--policy", policy_file(tmp_path, group, **RENAMED))
    assert run.code == 1 and run.codes() == {"UG611"}, run
    assert f"cannot tell whether stored objects carry finalizer {OLD}" in run.stdout, run
    assert "forbidden" in run.stdout, run


@pytest.mark.parametrize("carried", [True, False], ids=["an object carries it", "none does"])
def test_a_dropped_condition_type_on_a_stored_object_warns(
    cluster: Cluster, namespace: str, tmp_path: Path, carried: bool
) -> None:
    group = new_group()
    crd = widget_crd(group, {"a": STRING})
    apply(cluster, crd)
    store(cluster, namespace, group, "w", finalizers=[],
          conditions=("Ready", "Degraded") if carried else ("Ready",))  # fmt: skip
    account = guard_account(cluster, namespace, [crd], (f"widgets.{group}",))
    breaks = [{"type": "Degraded", "reason": "folded into Ready"}]
    policy = policy_file(tmp_path, group, **{"condition-breaks": breaks})
    run = run_hook(account, [crd], tmp_path, "--policy", policy)
    assert run.code == 0, run
    assert ("UG612" in run.codes(refusing_only=False)) is carried, run
    if carried:
        assert f"which this release no longer declares: {namespace}/w" in run.stdout, run


def test_evidence_and_the_finalizer_check_share_one_listing(
    cluster: Cluster, namespace: str, tmp_path: Path, proxy: FaultProxy,
    release_finalizers: list[str],
) -> None:  # fmt: skip
    """spec.legacy removed (UG201, whose evidence lists the Widgets) and a retired
    finalizer on the same CRD: the Widgets are requested once, and both verdicts come from
    that listing."""
    group = new_group()
    live = widget_crd(group, {"a": STRING, "legacy": STRING})
    chart = widget_crd(group, {"a": STRING})
    apply(cluster, live)
    release_finalizers.append(store(cluster, namespace, group, "old", finalizers=[OLD]))
    account = guard_account(cluster, namespace, [chart], (f"widgets.{group}",))
    through = proxy.kubeconfig(account, tmp_path / "through-proxy.yaml")
    run = run_hook(through, [chart], tmp_path, "--policy",
                   policy_file(tmp_path, group, **RENAMED))  # fmt: skip
    assert run.code == 1 and run.codes() == {"UG611"}, run
    assert "evidence: no stored object affected (1 checked)" in run.stdout, run
    listed = [s.path for s in proxy.seen(f"/apis/{group}/v1/widgets")]
    assert len(listed) == 1, listed


def with_condition_enum(group: str, *types: str) -> Any:
    """widgets.<group> whose status.conditions[].type is an enum of types."""
    crd = widget_crd(group, {"a": STRING})
    condition = {"type": "object", "properties": {"type": {**STRING, "enum": list(types)},
                                                  "status": STRING}}  # fmt: skip
    status = {"type": "object", "properties": {"conditions": {"type": "array", "items": condition}}}
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"] = status
    return crd


@pytest.mark.parametrize("carried", [True, False], ids=["an object carries it", "none does"])
def test_a_condition_type_the_chart_enum_drops_warns_with_no_policy(
    cluster: Cluster, namespace: str, tmp_path: Path, carried: bool
) -> None:
    """No policy: the vocabulary is the schema's enum on status.conditions[].type. The chart
    drops Degraded from it: UG612 warns where an object carries it, beside the engine's
    enum-restricted (UG207) with its evidence from the same listing."""
    group = new_group()
    live = with_condition_enum(group, "Ready", "Degraded")
    chart = with_condition_enum(group, "Ready")
    apply(cluster, live)
    store(cluster, namespace, group, "w", finalizers=[],
          conditions=("Ready", "Degraded") if carried else ("Ready",))  # fmt: skip
    account = guard_account(cluster, namespace, [chart], (f"widgets.{group}",))
    run = run_hook(account, [chart], tmp_path)
    assert run.code == (1 if carried else 0), run
    assert ("UG612" in run.codes(refusing_only=False)) is carried, run
    assert "UG207" in run.codes(refusing_only=False), run
    evidence = "1 of 1 widgets affected" if carried else "no stored object affected (1 checked)"
    assert evidence in run.stdout, run
