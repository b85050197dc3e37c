"""verify-history's reports from hand-built results: exact text, stable JSON keys."""

from __future__ import annotations

import json

from upgrade_guard.counters.history import CounterState, History
from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report.history import RENDERERS

REFUSAL = Finding(
    code="UG704",
    rule="schema-changed-without-bump",
    severity=Severity.ERROR,
    crd="(all CRDs)",
    version=None,
    path=None,
    message="the schema changed (w.example.com changed) but the schema version stayed at 3",
)
EXCUSED = Finding(
    code="UG201",
    rule="property-removed",
    severity=Severity.ERROR,
    crd="w.example.com",
    version="v1",
    path="spec.color",
    message="property removed",
    excused="color was never read",
)


def history(*findings: Finding) -> History:
    return History(
        baseline="origin/main",
        candidate="working tree",
        source="explicit: the working tree against origin/main",
        baseline_version=3,
        candidate_version=3,
        schema_changed=True,
        changes=("w.example.com changed",),
        first_adoption=False,
        restart=None,
        counters=(CounterState("controller-state-version", "monotonic", 2, 2),),
        outcome=Outcome(findings=findings, crds_compared=1),
    )


def test_text_lists_every_reason_then_the_verdict() -> None:
    assert RENDERERS["text"](history(REFUSAL, EXCUSED)) == (
        "baseline:  origin/main — explicit: the working tree against origin/main\n"
        "candidate: working tree\n"
        "policy:    none (built-in defaults)\n"
        "schema:    version 3 → 3; changed: w.example.com changed\n"
        "counter:   controller-state-version (monotonic) 2 → 2\n"
        "\n"
        "  error   UG704 schema-changed-without-bump  (all CRDs)\n"
        "          the schema changed (w.example.com changed) but the schema version"
        " stayed at 3\n"
        "  excused UG201 property-removed  w.example.com v1 spec.color\n"
        "          property removed\n"
        "          excused: color was never read\n"
        "\n"
        "upgrade-guard: history REFUSED — 1 reason; baseline origin/main (explicit: the"
        " working tree against origin/main); schema version 3 → 3, schema changed\n"
    )


def test_success_states_baseline_source_versions_and_change() -> None:
    last = RENDERERS["text"](history(EXCUSED)).splitlines()[-1]
    assert last == (
        "upgrade-guard: history OK — baseline origin/main (explicit: the working tree"
        " against origin/main); schema version 3 → 3, schema changed"
    )


def test_json_keys_are_always_present() -> None:
    for findings in ((), (REFUSAL, EXCUSED)):
        document = json.loads(RENDERERS["json"](history(*findings)))
        assert list(document) == [
            "verdict",
            "baseline",
            "candidate",
            "source",
            "policy",
            "schema",
            "counters",
            "notes",
            "summary",
            "findings",
        ]
        assert list(document["schema"]) == [
            "baseline_version",
            "candidate_version",
            "changed",
            "changes",
            "first_adoption",
            "restart",
        ]


def test_github_annotates_each_finding_and_the_verdict() -> None:
    lines = RENDERERS["github"](history(REFUSAL, EXCUSED)).splitlines()
    assert lines[0].startswith("::error title=UG704 schema-changed-without-bump::")
    assert lines[1].startswith("::notice title=UG201 property-removed::")
    assert lines[2].startswith("::error title=verify-history::upgrade-guard: history REFUSED")
    assert lines[3].startswith("upgrade-guard: history REFUSED")


def test_markdown_is_a_table() -> None:
    text = RENDERERS["markdown"](history(REFUSAL))
    assert "| error | UG704 | schema-changed-without-bump | (all CRDs) |" in text
    assert text.rstrip().endswith("schema changed**")
