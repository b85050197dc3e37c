"""verify-history's reports: the same reporters as diff, with the baseline, schema versions
and counters above the findings; exact text, stable JSON keys."""

from __future__ import annotations

import json

from upgrade_guard.counters.history import CounterState, VerifiedHistory, described
from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import REPORTERS

REFUSAL = Finding(
    code="UG704",
    rule="schema-changed-without-bump",
    severity=Severity.ERROR,
    crd=None,
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


def history(*findings: Finding) -> Outcome:
    return described(
        VerifiedHistory(
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
    ).outcome


def test_text_states_what_was_compared_then_every_reason_then_the_verdict() -> None:
    assert REPORTERS["text"](history(REFUSAL, EXCUSED)) == (
        "baseline:  origin/main — explicit: the working tree against origin/main\n"
        "candidate: working tree\n"
        "schema:    version 3 → 3; changed: w.example.com changed\n"
        "counter:   controller-state-version (monotonic) 2 → 2\n"
        "\n"
        "(all CRDs)\n"
        "  error   UG704 schema-changed-without-bump\n"
        "          the schema changed (w.example.com changed) but the schema version\n"
        "          stayed at 3\n"
        "\n"
        "w.example.com\n"
        "  excused UG201 property-removed  v1 spec.color\n"
        "          property removed\n"
        "          excused: color was never read\n"
        "\n"
        "policy: none (built-in defaults)\n"
        "upgrade-guard UNSAFE — 1 CRD; 1 error, 0 warning, 0 info, 1 excused\n"
    )


def test_json_keys_are_always_present() -> None:
    for findings in ((), (REFUSAL, EXCUSED)):
        document = json.loads(REPORTERS["json"](history(*findings)))
        assert list(document) == [
            "schemaVersion",
            "verdict",
            "policy",
            "summary",
            "history",
            "findings",
            "groups",
        ]
        assert list(document["history"]) == [
            "baseline",
            "candidate",
            "source",
            "schema",
            "counters",
            "notes",
        ]
        assert [f["crd"] for f in document["findings"]] == [None, "w.example.com"][: len(findings)]
        assert list(document["history"]["schema"]) == [
            "baseline_version",
            "candidate_version",
            "changed",
            "changes",
            "first_adoption",
            "restart",
        ]


def test_github_states_what_was_compared_and_annotates_each_finding() -> None:
    lines = REPORTERS["github"](history(REFUSAL, EXCUSED)).splitlines()
    assert lines[0].startswith("::error title=UG704 schema-changed-without-bump::(all CRDs): ")
    assert lines[1].startswith("::notice title=UG201 property-removed::")
    assert lines[2] == "baseline: origin/main — explicit: the working tree against origin/main"
    assert lines[6].startswith("upgrade-guard: unsafe (1 error")


def test_markdown_lists_what_was_compared_above_the_tables() -> None:
    text = REPORTERS["markdown"](history(REFUSAL))
    assert "- schema: version 3 → 3; changed: w.example.com changed" in text
    assert "### (all CRDs)\n" in text
    assert "| ❌ error | `UG704` schema-changed-without-bump |" in text
