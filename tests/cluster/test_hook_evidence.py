"""`upgrade-guard hook` with evidence from stored objects, against the real apiserver, with
the RBAC the chart grants: `get` on its CRDs, `list` on their resources. Each verdict the
objects decide sits beside the nearest one they decide the other way."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_hook import (
    STRING,
    UPGRADE_GUARD,
    apply,
    guard_account,
    new_group,
    run_hook,
    widget_crd,
)

from testenv import Cluster, CRDTrial
from upgrade_guard.cluster import stored
from upgrade_guard.cluster.client import Api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

ENUM = {"mode": {**STRING, "enum": ["Full"]}}
_KEEPS = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
KEPT = {"bag": _KEEPS}
KEPT_DECLARED = {
    "bag": {**_KEEPS, "properties": {"foo": {"type": "object", "properties": {"a": STRING}}}}
}


def store(cluster: Cluster, namespace: str, crd: dict[str, Any], specs: dict[str, Any]) -> None:
    trial = CRDTrial(cluster.admin, namespace)
    trial.crd = cluster.admin.get(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
    )
    for name, spec in specs.items():
        trial.create({"metadata": {"name": name}, "spec": spec}).expect_allowed()


def setup(cluster: Cluster, namespace: str, live: Any, chart: Any, specs: dict[str, Any],
          *, may_list: bool = True) -> tuple[Path, list[Any]]:  # fmt: skip
    apply(cluster, live)
    store(cluster, namespace, live, specs)
    listed = (f"widgets.{chart['spec']['group']}",) if may_list else ()
    return guard_account(cluster, namespace, [chart], listed), [chart]


@pytest.mark.parametrize(
    ("live_fields", "chart_fields", "specs", "exit_code", "evidence"),
    [
        pytest.param(
            {"mode": STRING}, ENUM, {"a": {"mode": "Snapshot"}, "b": {"mode": "Full"}}, 1,
            "evidence: 1 of 2 widgets affected: {ns}/a; refused on CREATE and on any change"
            " of spec.mode; other updates pass by ratcheting",
            id="enum-restricted-confirmed",
        ),
        pytest.param(
            {"mode": STRING}, ENUM, {"b": {"mode": "Full"}, "c": {}}, 0,
            "evidence: no stored object affected (2 checked)",
            id="enum-restricted-not-affected",
        ),
        pytest.param(
            {"mode": STRING, "legacy": STRING}, {"mode": STRING},
            {"a": {"legacy": "SecretValue"}}, 1,
            "evidence: 1 of 1 widgets affected: {ns}/a; they read back changed",
            id="pruned-confirmed",
        ),
        pytest.param(
            {"mode": STRING, "legacy": STRING}, {"mode": STRING}, {"a": {"mode": "x"}}, 0,
            "evidence: no stored object affected (1 checked)",
            id="pruned-not-affected",
        ),
        pytest.param(
            KEPT, KEPT_DECLARED,
            {"a": {"bag": {"foo": {"a": "x", "b": "SecretValue"}}}, "b": {"bag": {"foo": {}}}},
            1, "evidence: 1 of 2 widgets affected: {ns}/a; they read back changed",
            id="declared-where-kept-prunes-confirmed",
        ),
        pytest.param(
            KEPT, KEPT_DECLARED, {"b": {"bag": {"foo": {"a": "x"}}}}, 0,
            "evidence: no stored object affected (1 checked)",
            id="declared-where-kept-not-affected",
        ),
    ],
)  # fmt: skip
def test_stored_objects_decide(cluster: Cluster, namespace: str, tmp_path: Path,
                               live_fields: Any, chart_fields: Any, specs: dict[str, Any],
                               exit_code: int, evidence: str) -> None:  # fmt: skip
    group = new_group()
    live, chart = widget_crd(group, live_fields), widget_crd(group, chart_fields)
    kubeconfig, crds = setup(cluster, namespace, live, chart, specs)
    run = run_hook(kubeconfig, crds, tmp_path)
    assert run.code == exit_code, run
    assert f"  {evidence.format(ns=namespace)}" in run.stdout.splitlines(), run
    assert "SecretValue" not in run.stdout + run.termination, run


def test_the_ratcheting_note_of_a_required_field_is_the_apiservers(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """spec.owner newly required: the apiserver reports the missing field on spec, so every
    change of spec is refused, not only one of spec.owner; an update leaving spec as it is
    passes. The note says so, and the apiserver does so once the chart's CRD is applied."""
    group = new_group()
    live = widget_crd(group, {"mode": STRING, "owner": STRING})
    chart = widget_crd(group, {"mode": STRING, "owner": STRING}, required=["owner"])
    kubeconfig, crds = setup(cluster, namespace, live, chart, {"a": {"mode": "Full"}})
    run = run_hook(kubeconfig, crds, tmp_path)
    assert run.code == 1, run
    note = (
        f"  evidence: 1 of 1 widgets affected: {namespace}/a; refused on CREATE and on any"
        " change of spec; other updates pass by ratcheting"
    )
    assert note in run.stdout.splitlines(), run
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(chart).expect_allowed()
    stored = trial.get("a")
    trial.update("a", lambda o: o["metadata"].update(labels={"touched": "yes"})).expect_allowed()
    refused = trial.update("a", lambda o: o["spec"].update(mode="Snapshot"))
    refused.expect_refused("spec.owner: Required value")
    trial.create({"metadata": {"name": "copy"}, "spec": stored["spec"]}).expect_refused(
        "spec.owner: Required value"
    )


def field_removed(cluster: Cluster, namespace: str, specs: dict[str, Any],
                  may_list: bool = True) -> tuple[Path, list[Any]]:  # fmt: skip
    """spec.legacy removed from the chart's CRD (UG201), ``specs`` stored."""
    group = new_group()
    live = widget_crd(group, {"mode": STRING, "legacy": STRING})
    chart = widget_crd(group, {"mode": STRING})
    return setup(cluster, namespace, live, chart, specs, may_list=may_list)


def test_a_break_diff_declared_excuses_in_the_hook_and_says_what_objects_confirm(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Issue 34 §7: the entries `diff --declare-breaks` writes (offline, from the two CRD
    files) are accepted by the hook and excuse exactly those findings; where a stored object
    confirms one, the excused finding says so. Beside it, the break for the release after:
    not applied, the finding refuses with the objects' evidence."""
    group = new_group()
    live = widget_crd(group, {"mode": STRING, "size": STRING},
                      annotations={"crd-schema-version": "1"})  # fmt: skip
    chart = widget_crd(group, {"mode": ENUM["mode"], "size": {**STRING, "maxLength": 3}},
                       annotations={"crd-schema-version": "2"})  # fmt: skip
    specs = {"a": {"mode": "Snapshot", "size": "1"}, "b": {"mode": "Full", "size": "2"}}
    kubeconfig, crds = setup(cluster, namespace, live, chart, specs)
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    for name, body in (("live.yaml", live), ("chart.yaml", chart)):
        (work / name).write_text(yaml.safe_dump(body))
    declared = subprocess.run(
        [UPGRADE_GUARD, "diff", "live.yaml", "chart.yaml", "--declare-breaks"],
        cwd=work, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert declared.returncode == 1, declared.stderr
    policy = work / ".upgrade-guard.yaml"
    written = yaml.safe_load(policy.read_text())["declared-breaks"]
    assert sorted((b["crd"], b.get("version"), b.get("path"), b["schema-version"])
                  for b in written) == [
        (f"widgets.{group}", "v1", "spec.mode", 2), (f"widgets.{group}", "v1", "spec.size", 2)
    ]  # fmt: skip
    policy.write_text(policy.read_text().replace('reason: ""', "reason: meant"))
    run = run_hook(kubeconfig, crds, tmp_path, "--policy", str(policy))
    assert run.code == 0 and run.codes(refusing_only=False) == {"UG207", "UG208"}, run
    assert "UG902" not in run.stdout and "error " not in run.stdout, run
    confirmed = (
        f"  evidence: excused, though confirmed: 1 of 2 widgets affected: {namespace}/a;"
        " refused on CREATE and on any change of spec.mode; other updates pass by ratcheting"
    )
    lines = run.stdout.splitlines()
    assert confirmed in lines, run
    assert sum(line.startswith("excused ") for line in lines) == 2, run
    assert sum("excused, though confirmed" in line for line in lines) == 1, run
    later = policy.read_text().replace("schema-version: 2", "schema-version: 3")
    policy.write_text(later)
    other = run_hook(kubeconfig, crds, tmp_path, "--policy", str(policy))
    assert other.code == 1 and other.codes() == {"UG207"}, other
    assert f"  evidence: 1 of 2 widgets affected: {namespace}/a;" in other.stdout, other


def test_without_list_permission_the_finding_stays(cluster: Cluster, namespace: str,
                                                   tmp_path: Path) -> None:  # fmt: skip
    kubeconfig, crds = field_removed(cluster, namespace, {"a": {}}, may_list=False)
    run = run_hook(kubeconfig, crds, tmp_path)
    assert run.code == 1, run
    assert "evidence: not checkable: cannot list the stored widgets: forbidden" in run.stdout, run


@pytest.mark.parametrize("may_list", [True, False], ids=["may list", "may not list"])
def test_without_list_no_run_passes_what_it_refuses_with_list(
    cluster: Cluster, namespace: str, tmp_path: Path, may_list: bool
) -> None:
    """An enum restricted under a stored value (UG207, ratcheted: a warning the stored object
    makes an error). Without `list` the guard cannot look, so it refuses all the same, naming
    the permission; --fail-open is the way past it."""
    group = new_group()
    live, chart = widget_crd(group, {"mode": STRING}), widget_crd(group, ENUM)
    kubeconfig, crds = setup(
        cluster, namespace, live, chart, {"a": {"mode": "Snapshot"}}, may_list=may_list
    )
    run = run_hook(kubeconfig, crds, tmp_path)
    assert run.code == 1 and run.codes() == {"UG207"}, run
    if not may_list:
        said = " ".join(run.stdout.split())
        assert f"grant `list` on widgets.{group}" in said, run
        assert "an error until they can be checked" in said, run


def test_strict_policy_keeps_the_error(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    kubeconfig, crds = field_removed(cluster, namespace, {"a": {}})
    policy = tmp_path / "policy.yaml"
    policy.write_text("profile: strict\n")
    run = run_hook(kubeconfig, crds, tmp_path, "--policy", str(policy))
    assert run.code == 1, run
    assert "(1 checked) (strict policy: still an error)" in run.stdout, run


def test_the_limit_is_said(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    kubeconfig, crds = field_removed(cluster, namespace, {"a": {}, "b": {}})
    run = run_hook(kubeconfig, crds, tmp_path, "--evidence-limit", "1")
    assert run.code == 1, run
    assert "not checkable: stopped at the limit of 1 widgets, none affected" in run.stdout, run


@pytest.mark.parametrize(("limit", "listed", "complete"), [(5, 5, True), (3, 3, False)])
def test_listings_page_in_order_with_pages_read_ahead(
    cluster: Cluster, namespace: str, monkeypatch: pytest.MonkeyPatch, limit: int, listed: int,
    complete: bool,
) -> None:  # fmt: skip
    """Pages of two objects: five stored objects take three pages, read on from the first
    page that was requested ahead; the empty CRD after it keeps its place."""
    monkeypatch.setattr(stored, "PAGE", 2)
    full, empty = widget_crd(new_group(), {"mode": STRING}), widget_crd(new_group(), {})
    apply(cluster, full, empty)
    store(cluster, namespace, full, {f"w{i}": {} for i in range(5)})
    kubeconfig = guard_account(
        cluster, namespace, [], tuple(f"widgets.{c['spec']['group']}" for c in (full, empty))
    )
    crds = [stored.StoredAt(c["spec"]["group"], "v1", "widgets") for c in (full, empty)]
    with Api(str(kubeconfig), None, time.monotonic() + 60) as api:
        listings = [(listing, [o["metadata"]["name"] for o in listing])
                    for listing in stored.stored_objects(api, crds, limit)]  # fmt: skip
    (first, names), (second, nothing) = listings
    assert names == [f"w{i}" for i in range(listed)] and first.complete is complete
    assert nothing == [] and second.complete and second.problem is None


TIERED = {"mode": STRING, "tier": {**STRING, "default": "gold"}}


def _rolled_back(cluster: Cluster, namespace: str, written: tuple[str, ...]) -> tuple[Any, ...]:
    """Widgets stored before the live CRD added spec.tier with a default, then ``written``
    (created under the default, or label-patched after it); the chart's CRD is the one
    before (a rollback: spec.tier pruned, UG201)."""
    group = new_group()
    before, live = widget_crd(group, {"mode": STRING}), widget_crd(group, TIERED)
    apply(cluster, before)
    store(cluster, namespace, before, {"untouched": {"mode": "a"}, "patched": {"mode": "a"}})
    apply(cluster, live)
    trial = CRDTrial(cluster.admin, namespace)
    trial.crd = cluster.admin.get(f"{CRDS}/{live['metadata']['name']}")
    if "created" in written:
        trial.create({"metadata": {"name": "created"}, "spec": {"mode": "a"}}).expect_allowed()
    if "patched" in written:
        touch = trial.update("patched", lambda o: o["metadata"].update(labels={"touched": "yes"}))
        touch.expect_allowed()
    kubeconfig = guard_account(cluster, namespace, [before], (f"widgets.{group}",))
    return kubeconfig, before, trial, group


def _stored_tiers(cluster: Cluster, trial: CRDTrial, group: str) -> dict[str, str]:
    """What each widget holds in storage at spec.tier, told apart from a default applied on
    read by a CRD defaulting it to another value: a stored value shows through."""
    apply(cluster, widget_crd(group, {"mode": STRING, "tier": {**STRING, "default": "silver"}}))
    # once the untouched widget reads silver, the new schema serves reads
    trial.wait_read("untouched", lambda o: o["spec"]["tier"] == "silver")
    listed = cluster.admin.get(f"/apis/{group}/v1/namespaces/{trial.namespace}/widgets")
    return {o["metadata"]["name"]: o["spec"]["tier"] for o in listed["items"]}


@pytest.mark.parametrize(
    ("written", "exit_code", "evidence"),
    [
        pytest.param(
            (), 0,
            "evidence: no stored object affected (2 checked); 2 widgets read there only what"
            " the live schema defaults and were not written since the live CRD last changed:"
            " it may be defaulted on read only, so no loss is claimed for them",
            id="defaulted-on-read-only",
        ),
        pytest.param(
            ("created", "patched"), 1,
            "evidence: 2 of 3 widgets affected: {ns}/created, {ns}/patched; they read back"
            " changed; 1 widgets read there only what the live schema defaults and were not"
            " written since the live CRD last changed: it may be defaulted on read only, so no"
            " loss is claimed for them",
            id="stored-by-a-write-under-the-default",
        ),
    ],
)  # fmt: skip
def test_a_rollback_claims_loss_only_of_stored_defaults(
    cluster: Cluster, namespace: str, tmp_path: Path, written: tuple[str, ...], exit_code: int,
    evidence: str,
) -> None:  # fmt: skip
    """Issue 22 §3: a rollback prunes spec.tier, which the live CRD defaults. Widgets not
    written since it did read it only as a default applied on read: nothing stored goes
    away. One created under the default (which its manager then owns) or label-patched
    after it (a write stores every default the object reads with) holds it in storage."""
    kubeconfig, before, trial, group = _rolled_back(cluster, namespace, written)
    run = run_hook(kubeconfig, [before], tmp_path)
    assert run.code == exit_code, run
    assert f"  {evidence.format(ns=namespace)}" in run.stdout.splitlines(), run
    stored = _stored_tiers(cluster, trial, group)
    assert stored == {"untouched": "silver", **dict.fromkeys(written, "gold")} | (
        {} if "patched" in written else {"patched": "silver"}
    )
