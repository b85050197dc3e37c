"""The hook's checks of what stored objects carry (issue 24), pure: the objects tallied as
the hook tallies its listing, then judged. Each refusal beside the nearest case that passes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from crd_builders import NAME, crd, obj, spec_schema, version
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding
from upgrade_guard.judging import judge
from upgrade_guard.pipelines import evidence, hook_run
from upgrade_guard.policy import parse_policy
from upgrade_guard.subjects import HookSubject, stopped_handling

OLD, NEW = "example.com/cleanup", "example.com/cleanup-v2"
RENAMED = {
    "finalizers": [NEW],
    "retired-finalizers": [{"finalizer": OLD, "migration": "2.0 swaps it on reconcile"}],
}


def stored(name: str, finalizers: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> Any:
    return {
        "metadata": {"namespace": "ns", "name": name, "finalizers": list(finalizers)},
        "spec": {"secret": "never shown"},
        "status": {"conditions": [{"type": t, "status": "True", "message": "x"} for t in types]},
    }


def with_enum(*types: str) -> Crd:
    condition = obj(type={"type": "string", "enum": list(types)})
    schema = obj(spec=obj(), status=obj(conditions={"type": "array", "items": condition}))
    return Crd(crd(version(schema=schema)))


PLAIN = Crd(crd(version(schema=spec_schema())))


def found(
    controller: dict[str, Any] | None,
    objects: list[dict[str, Any]],
    live_crd: Crd = PLAIN,
    chart_crd: Crd = PLAIN,
    *,
    complete: bool = True,
    problem: str | None = None,
    replaced: dict[str, Any] | None = None,
) -> list[Finding]:
    """What UG611 and UG612 find: ``controller`` is this release's declaration (None: none),
    ``replaced`` the replaced release's (from its record, under Helm)."""
    declared = [] if controller is None else [{"crd": NAME, **controller}]
    policy = parse_policy({"controllers": declared}, "policy.yaml")
    before = [] if replaced is None else [{"crd": NAME, **replaced}]
    chart, live = {NAME: chart_crd}, {NAME: live_crd}
    replaced_controllers = parse_policy({"controllers": before}, "record").controllers
    subject = HookSubject(
        chart=chart,
        live=live,
        controllers=policy.controllers,
        replaced="release c-3.0.0 (revision 1)",
        replaced_controllers=replaced_controllers,
        retired=stopped_handling(policy.controllers, replaced_controllers, chart, live),
    )
    carried = {}
    for name in subject.retired:
        tally = evidence.CarriedTally()
        for each in objects:
            tally.add(each)
        carried[name] = tally.carried(complete=complete, problem=problem)
    findings = judge(hook_run.changes(replace(subject, carried=carried)), policy).findings
    return [f for f in findings if f.code in ("UG611", "UG612")]


FINALIZER_ROWS = [
    # (id, policy's controller, stored objects' finalizers, refused)
    ("no object carries the retired finalizer", RENAMED, [[NEW], []], False),
    ("an object carries it", RENAMED, [[NEW], [OLD, "other.io/keep"]], True),
    ("another controller's finalizer only", RENAMED, [["other.io/keep"]], False),
    ("nothing retired: an undeclared finalizer is not ours to judge",
     {"finalizers": [NEW]}, [[OLD]], False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("controller", "finalizers", "refused"),
    [r[1:] for r in FINALIZER_ROWS],
    ids=[r[0] for r in FINALIZER_ROWS],
)
def test_finalizers_no_longer_handled(
    controller: dict[str, Any], finalizers: list[list[str]], refused: bool
) -> None:
    objects = [stored(f"b{i}", tuple(f)) for i, f in enumerate(finalizers)]
    findings = found(controller, objects)
    assert [(f.code, f.severity.name) for f in findings] == (
        [("UG611", "ERROR")] if refused else []
    )
    if refused:
        assert findings[0].message == (
            f"1 stored object(s) carry finalizer {OLD}, which this release no longer handles:"
            " ns/b1; deleting them never finishes (declared migration: 2.0 swaps it on"
            " reconcile)"
        )
        assert "never shown" not in str(findings[0])


REPLACED_ROWS = [
    # (id, this release's controller, the replaced release's, refused)
    ("renamed without a migration: the replaced release handled it", {"finalizers": [NEW]},
     {"finalizers": [OLD]}, True),
    ("still handled", {"finalizers": [OLD, NEW]}, {"finalizers": [OLD]}, False),
    ("this release declares nothing of the CRD: nothing to compare", None,
     {"finalizers": [OLD]}, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("controller", "replaced", "refused"),
    [r[1:] for r in REPLACED_ROWS],
    ids=[r[0] for r in REPLACED_ROWS],
)
def test_finalizers_the_replaced_release_handled(
    controller: dict[str, Any] | None, replaced: dict[str, Any], refused: bool
) -> None:
    findings = found(controller, [stored("b0", (OLD,))], replaced=replaced)
    assert [f.code for f in findings] == (["UG611"] if refused else [])
    if refused:
        assert findings[0].message.endswith(
            "(release c-3.0.0 (revision 1) handles it; no migration declared)"
        )


def test_condition_types_the_replaced_release_declared_warn() -> None:
    findings = found(
        {"conditions": {"Ready": None}},
        [stored("b0", types=("Degraded",))],
        replaced={"conditions": {"Ready": None, "Degraded": None}},
    )
    assert [f.code for f in findings] == ["UG612"]


@pytest.mark.parametrize(
    ("complete", "problem", "why"),
    [
        (False, None, "stopped at the limit of 1 objects"),
        (True, "cannot list the stored widgets: HTTP 403", "cannot list the stored widgets"),
    ],
)
def test_a_listing_that_could_not_read_every_object_cannot_tell_and_refuses(
    complete: bool, problem: str | None, why: str
) -> None:
    findings = found(RENAMED, [stored("b0", (NEW,))], complete=complete, problem=problem)
    assert [f.code for f in findings] == ["UG611"]
    assert findings[0].message.startswith(
        f"cannot tell whether stored objects carry finalizer {OLD}"
    )
    assert why in findings[0].message
    # Every object read, none carrying it: nothing to tell.
    assert found(RENAMED, [stored("b0", (NEW,))]) == []


CONDITION_ROWS = [
    # (id, controller, live CRD, chart CRD, stored types, warned)
    ("type broken, none carry it",
     {"condition-breaks": [{"type": "Degraded", "reason": "folded into Ready"}]},
     PLAIN, PLAIN, ["Ready"], False),
    ("type broken, an object carries it",
     {"condition-breaks": [{"type": "Degraded", "reason": "folded into Ready"}]},
     PLAIN, PLAIN, ["Ready", "Degraded"], True),
    ("only a reason broken: the type stays",
     {"conditions": {"Degraded": ["A"]},
      "condition-breaks": [{"type": "Degraded", "condition-reasons": ["B"], "reason": "r"}]},
     PLAIN, PLAIN, ["Degraded"], False),
    ("the live enum allows a type the chart's lacks", {},
     with_enum("Ready", "Degraded"), with_enum("Ready"), ["Degraded"], True),
    ("the chart's enum keeps it", {},
     with_enum("Ready", "Degraded"), with_enum("Ready", "Degraded"), ["Degraded"], False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("controller", "live_crd", "chart_crd", "types", "warned"),
    [r[1:] for r in CONDITION_ROWS],
    ids=[r[0] for r in CONDITION_ROWS],
)
def test_condition_types_no_longer_declared_warn(
    controller: dict[str, Any], live_crd: Crd, chart_crd: Crd, types: list[str], warned: bool
) -> None:
    findings = found(controller, [stored("b0", types=tuple(types))], live_crd, chart_crd)
    codes = [(f.code, f.severity.name) for f in findings]
    assert codes == ([("UG612", "WARNING")] if warned else [])
    if warned:
        assert "kubectl wait --for=condition=Degraded" in findings[0].message


def test_the_tally_keeps_counts_and_the_first_names_only() -> None:
    tally = evidence.CarriedTally()
    for i in range(7):
        tally.add(stored(f"b{i}", (OLD, OLD)))
    carried = tally.carried(complete=True, problem=None)
    assert carried.checked == 7
    assert carried.finalizers[OLD].count == 7  # once per object, however often it is listed
    assert carried.finalizers[OLD].names == tuple(f"ns/b{i}" for i in range(5))
