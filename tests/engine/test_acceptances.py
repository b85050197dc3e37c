"""A cluster admin's acceptance at upgrade time: the exact finding it names passes, for the
chart version it names only; one that accepts nothing is refused as a stale declared break
is. Each refusal beside the nearest acceptance that lets the upgrade through."""

from __future__ import annotations

from typing import Any

import pytest

from crd_builders import NAME, crd, spec_schema, version
from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Outcome
from upgrade_guard.judging import Acceptance, Context, judge
from upgrade_guard.policy import DEFAULT_POLICY
from upgrade_guard.report import hook_log
from upgrade_guard.report.ways_out import UNASKED, Asked

STR = {"type": "string"}
OLD = crd(version(schema=spec_schema(a=STR, b=STR)))
NEW = crd(version(schema=spec_schema(a=STR)))  # spec.b removed: UG201, refused
EXACT = Acceptance("1.19.0", "UG201", NAME, "v1", "spec.b")


def judged(old: dict[str, Any], new: dict[str, Any], *accepted: Acceptance) -> Outcome:
    changes = engine.changes_between({NAME: Crd(old)}, {NAME: Crd(new)}, DEFAULT_POLICY)
    context = Context(chart_version="1.19.0", acceptances=accepted)
    return judge(changes, DEFAULT_POLICY, context)


def refusing(outcome: Outcome) -> list[tuple[str, str | None]]:
    return [(f.code, f.path) for f in outcome.findings if f.refuses]


@pytest.mark.parametrize(
    ("old", "new", "acceptance", "refused"),
    [
        pytest.param(OLD, NEW, EXACT, [], id="the exact finding, this chart: accepted"),
        pytest.param(OLD, NEW, Acceptance("1.18.0", "UG201", NAME, "v1", "spec.b"),
                     [("UG201", "spec.b"), ("UG903", "spec.b")], id="another chart version"),
        pytest.param(OLD, NEW, Acceptance("1.19.0", "UG201", NAME, "v1", "spec.a"),
                     [("UG201", "spec.b"), ("UG903", "spec.a")], id="another path"),
        pytest.param(OLD, NEW, Acceptance("1.19.0", "UG204", NAME, "v1", "spec.b"),
                     [("UG201", "spec.b"), ("UG903", "spec.b")], id="another code"),
        pytest.param(NEW, crd(version(schema=spec_schema())), EXACT,
                     [("UG201", "spec.a"), ("UG903", "spec.b")], id="matching nothing"),
        pytest.param(NEW, NEW, EXACT, [], id="live equals the chart: idle"),
    ],
)  # fmt: skip
def test_an_acceptance_lets_through_exactly_what_it_names(
    old: dict[str, Any], new: dict[str, Any], acceptance: Acceptance, refused: list[Any]
) -> None:
    assert sorted(refusing(judged(old, new, acceptance))) == refused


def test_the_verdict_says_accepted_loudly() -> None:
    outcome = judged(OLD, NEW, EXACT)
    text = hook_log.render(outcome, "pre-upgrade", 1, asked=Asked(chart_version="1.19.0"))
    lines = text.splitlines()
    assert lines[0] == (
        "upgrade-guard SAFE with 1 finding ACCEPTED by the cluster admin: pre-upgrade of 1 CRD;"
        " 1 excused"
    )
    assert lines[1].startswith(f"ACCEPTED UG201 property-removed {NAME} v1 spec.b: ")
    assert lines[2] == "  ACCEPTED by the cluster admin for chart 1.19.0"


def test_a_stale_acceptance_says_which_chart_it_was_for() -> None:
    stale = Acceptance("1.18.0", "UG201", NAME, "v1", "spec.b")
    (finding,) = [f for f in judged(NEW, NEW, stale).findings if f.code == "UG903"]
    assert finding.message == (
        f"acceptance UG201 {NAME} v1 spec.b for chart 1.18.0 accepts nothing: it was given for"
        " chart 1.18.0, this is chart 1.19.0"
    )
    assert "upgrade-guard.accept=[]" in hook_log.way_out(finding, UNASKED)
