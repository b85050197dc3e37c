# ruff: noqa: E501  (expected report lines are longer than code lines)
"""Every reporter against one hand-built Outcome, checked to the character."""

from __future__ import annotations

import json
from dataclasses import replace

from upgrade_guard.findings import Finding, Outcome, Severity, Witness
from upgrade_guard.report import REPORTERS, Terminal, text

OUTCOME = Outcome(
    findings=(
        Finding(
            "UG207",
            "enum-restricted",
            Severity.ERROR,
            "a.example.com",
            "v1",
            "spec.mode",
            'enum values removed: ["Snapshot"]',
            ["Full", "Snapshot"],
            ["Full"],
        ),
        Finding(
            "UG208",
            "bound-tightened",
            Severity.WARNING,
            "a.example.com",
            "v1",
            "spec.size",
            "maximum tightened: <= 10 -> <= 5",
            10,
            5,
            notes=("Kubernetes 1.31 ratchets this check",),
        ),
        Finding(
            "UG201",
            "property-removed",
            Severity.ERROR,
            "a.example.com",
            "v1",
            "spec.old",
            "removed from the schema: stored values are pruned on read",
            excused="unused since 1.2",
        ),
        Finding(
            "UG105",
            "served-version-removed",
            Severity.ERROR,
            "b.example.com",
            None,
            None,
            "served version v1alpha1 removed",
            "v1alpha1",
        ),
    ),
    crds_compared=2,
)

TEXT = """\
a.example.com
  error   UG207 enum-restricted  v1 spec.mode
          enum values removed: ["Snapshot"]
  warning UG208 bound-tightened  v1 spec.size
          maximum tightened: <= 10 -> <= 5
          note: Kubernetes 1.31 ratchets this check
  excused UG201 property-removed  v1 spec.old
          removed from the schema: stored values are pruned on read
          excused: unused since 1.2

b.example.com
  error   UG105 served-version-removed
          served version v1alpha1 removed

policy: none (built-in defaults)
upgrade-guard UNSAFE — 2 CRDs; 2 error, 1 warning, 0 info, 1 excused
"""

MARKDOWN = """\
**upgrade-guard: unsafe** — 2 error, 1 warning, 0 info, 1 excused

Policy: `none (built-in defaults)`

### `a.example.com`

| severity | rule | version | path | finding |
|---|---|---|---|---|
| ❌ error | `UG207` enum-restricted | v1 | `spec.mode` | enum values removed: ["Snapshot"] |
| ⚠️ warning | `UG208` bound-tightened | v1 | `spec.size` | maximum tightened: <= 10 -> <= 5 (Kubernetes 1.31 ratchets this check) |
| ✔️ excused | `UG201` property-removed | v1 | `spec.old` | removed from the schema: stored values are pruned on read (excused: unused since 1.2) |

### `b.example.com`

| severity | rule | version | path | finding |
|---|---|---|---|---|
| ❌ error | `UG105` served-version-removed |  |  | served version v1alpha1 removed |
"""

GITHUB = """\
::error title=UG207 enum-restricted::a.example.com v1 spec.mode: enum values removed: ["Snapshot"]
::warning title=UG208 bound-tightened::a.example.com v1 spec.size: maximum tightened: <= 10 -> <= 5
::notice title=UG201 property-removed::a.example.com v1 spec.old: removed from the schema: stored values are pruned on read (excused: unused since 1.2)
::error title=UG105 served-version-removed::b.example.com: served version v1alpha1 removed
upgrade-guard: unsafe (2 error, 1 warning, 0 info, 1 excused; policy: none (built-in defaults))
"""


def test_text_report_is_plain_when_not_on_a_terminal() -> None:
    assert REPORTERS["text"](OUTCOME) == TEXT


def test_text_report_fits_80_columns() -> None:
    assert all(len(line) <= 80 for line in text.render(OUTCOME).splitlines())


def test_text_report_colours_only_when_asked() -> None:
    assert "\x1b[" in text.render(OUTCOME, Terminal(color=True))
    assert "\x1b[" not in REPORTERS["text"](OUTCOME)


def test_markdown_report() -> None:
    assert REPORTERS["markdown"](OUTCOME) == MARKDOWN


def test_github_annotations() -> None:
    assert REPORTERS["github"](OUTCOME) == GITHUB


def test_json_report_shape_is_stable() -> None:
    document = json.loads(REPORTERS["json"](OUTCOME))
    assert document["verdict"] == "unsafe"
    assert document["summary"] == {
        "error": 2,
        "warning": 1,
        "info": 0,
        "excused": 1,
        "unproven": 0,
    }
    assert document["findings"][0] == {
        "code": "UG207",
        "rule": "enum-restricted",
        "severity": "error",
        "crd": "a.example.com",
        "version": "v1",
        "path": "spec.mode",
        "message": 'enum values removed: ["Snapshot"]',
        "excused": False,
        "reason": None,
        "notes": [],
        "old": ["Full", "Snapshot"],
        "new": ["Full"],
        "proven": None,
        "witness": None,
    }
    assert document["findings"][2]["excused"] is True
    assert document["findings"][2]["reason"] == "unused since 1.2"
    assert document["findings"][3]["version"] is None and document["findings"][3]["path"] is None


def test_safe_outcome() -> None:
    safe = Outcome(findings=(), crds_compared=1)
    assert REPORTERS["text"](safe) == (
        "policy: none (built-in defaults)\n"
        "upgrade-guard SAFE — 1 CRD; 0 error, 0 warning, 0 info, 0 excused\n"
    )
    assert json.loads(REPORTERS["json"](safe)) == {
        "schemaVersion": 2,
        "verdict": "safe",
        "policy": "none (built-in defaults)",
        "summary": {"error": 0, "warning": 0, "info": 0, "excused": 0, "unproven": 0},
        "history": None,
        "findings": [],
        "groups": [],
    }


def _max_length(crd: str, path: str) -> Finding:
    return Finding(
        "UG208", "bound-tightened", Severity.ERROR, crd, "v1", path,
        "maxLength tightened: none -> <= 253", None, 253,
    )  # fmt: skip


REPEATED = Outcome(
    findings=(
        *(_max_length("a.example.com", f"spec.name{i}") for i in range(4)),
        _max_length("b.example.com", "spec.name"),
        OUTCOME.findings[3],
    ),
    crds_compared=2,
)

REPEATED_TEXT = """\
Repeated changes
  error   UG208 bound-tightened  5 times in 2 CRDs
          maxLength tightened: none -> <= 253
          at a.example.com v1 spec.name0
             a.example.com v1 spec.name1
             a.example.com v1 spec.name2
             and 2 more

b.example.com
  error   UG105 served-version-removed
          served version v1alpha1 removed

policy: none (built-in defaults)
upgrade-guard UNSAFE — 2 CRDs; 6 error, 0 warning, 0 info, 0 excused
"""

REPEATED_MARKDOWN = """\
**upgrade-guard: unsafe** — 6 error, 0 warning, 0 info, 0 excused

Policy: `none (built-in defaults)`

### Repeated changes

| severity | rule | times | CRDs | first places | finding |
|---|---|---|---|---|---|
| ❌ error | `UG208` bound-tightened | 5 | `a.example.com`, `b.example.com` | `a.example.com v1 spec.name0`, `a.example.com v1 spec.name1`, `a.example.com v1 spec.name2` and 2 more | maxLength tightened: none -> <= 253 |

### `b.example.com`

| severity | rule | version | path | finding |
|---|---|---|---|---|
| ❌ error | `UG105` served-version-removed |  |  | served version v1alpha1 removed |
"""

REPEATED_GITHUB = """\
::error title=UG208 bound-tightened (5 times)::5 times in 2 CRDs: maxLength tightened: none -> <= 253; at a.example.com v1 spec.name0, a.example.com v1 spec.name1, a.example.com v1 spec.name2 and 2 more
::error title=UG105 served-version-removed::b.example.com: served version v1alpha1 removed
upgrade-guard: unsafe (6 error, 0 warning, 0 info, 0 excused; policy: none (built-in defaults))
"""


def test_identical_changes_are_one_entry_in_text_markdown_and_github() -> None:
    assert REPORTERS["text"](REPEATED) == REPEATED_TEXT
    assert REPORTERS["markdown"](REPEATED) == REPEATED_MARKDOWN
    assert REPORTERS["github"](REPEATED) == REPEATED_GITHUB


def test_json_keeps_every_finding_and_adds_the_groups() -> None:
    document = json.loads(REPORTERS["json"](REPEATED))
    assert len(document["findings"]) == 6
    assert document["summary"]["error"] == 6
    assert document["groups"] == [
        {
            "code": "UG208",
            "rule": "bound-tightened",
            "severity": "error",
            "message": "maxLength tightened: none -> <= 253",
            "excused": False,
            "reason": None,
            "old": None,
            "new": 253,
            "count": 5,
            "crds": ["a.example.com", "b.example.com"],
            "places": [
                "a.example.com v1 spec.name0",
                "a.example.com v1 spec.name1",
                "a.example.com v1 spec.name2",
            ],
        }
    ]


def test_a_change_with_other_values_is_not_grouped() -> None:
    other = replace(REPEATED.findings[0], new=128, message="maxLength tightened: none -> <= 128")
    outcome = replace(REPEATED, findings=(REPEATED.findings[0], other))
    assert json.loads(REPORTERS["json"](outcome))["groups"] == []


def test_a_repeated_change_keeps_the_notes_of_its_places() -> None:
    """Each note once, with its places unless every finding of the change carries it."""

    def unchecked(path: str, why: str) -> Finding:
        return Finding("UG202", "required-added", Severity.ERROR, "a.example.com", "v1", path,
                       "required", notes=("ratcheted", f"evidence: not checkable: {why}"))  # fmt: skip

    limit = "stopped at the limit of 10 widgets, none affected"
    findings = (
        unchecked("spec.a", limit),
        unchecked("spec.b", limit),
        unchecked("spec.c", "objects are converted by a webhook"),
    )
    notes = [
        "ratcheted",
        f"evidence: not checkable: {limit} (at a.example.com v1 spec.a, a.example.com v1 spec.b)",
        "evidence: not checkable: objects are converted by a webhook (at a.example.com v1 spec.c)",
    ]
    outcome = Outcome(findings, 1)
    shown = REPORTERS["text"](outcome, Terminal(width=200))
    assert all(f"note: {note}" in shown for note in notes), shown
    assert all(f"({note})" in REPORTERS["markdown"](outcome) for note in notes)


WITNESS = Witness(
    "v1",
    "create",
    {"apiVersion": "a.example.com/v1", "kind": "A", "metadata": {"name": "witness"},
     "spec": {"mode": "Snapshot"}},
    "refuses",
    "spec.mode: Unsupported value",
)  # fmt: skip
PROVEN = replace(OUTCOME.findings[0], witness=WITNESS, proven=True)
UNPROVEN = replace(OUTCOME.findings[3], proven=False)
WITNESSED = replace(OUTCOME, findings=(PROVEN, *OUTCOME.findings[1:3], UNPROVEN))


def test_json_report_carries_the_witness_and_counts_unproven_errors() -> None:
    document = json.loads(REPORTERS["json"](WITNESSED))
    assert document["findings"][0]["proven"] is True
    assert document["findings"][0]["witness"] == {
        "version": "v1",
        "operation": "create",
        "stored": WITNESS.stored,
        "object": None,
        "apiserver": "refuses",
        "message": "spec.mode: Unsupported value",
        "read_back": None,
        "read_version": None,
        "stored_under": None,
        "applied": None,
    }
    assert document["findings"][3]["proven"] is False
    assert document["findings"][3]["witness"] is None
    assert document["summary"]["unproven"] == 1


def test_text_report_marks_unproven_errors_and_shows_witnesses_when_asked() -> None:
    plain = REPORTERS["text"](WITNESSED)
    assert "unproven: no witness could be built for it; it stays an error" in plain
    assert "witness:" not in plain
    assert plain.endswith("2 error, 1 warning, 0 info, 1 excused, 1 unproven\n")
    shown = text.render(WITNESSED, Terminal(witnesses=True))
    assert (
        "          witness: create at v1: the apiserver refuses: spec.mode: Unsupported value"
        in shown
    )
    assert (
        '            stored: {"apiVersion":"a.example.com/v1","kind":"A","metadata":'
        '{"name":"witness"},"spec":{"mode":"Snapshot"}}' in shown
    )


def test_text_report_says_where_a_rollback_s_witness_was_stored() -> None:
    """UG106's witness is an apply of the old CRD, made at no version."""
    rollback = Witness(
        "v1alpha1", "apply-old-crd", WITNESS.stored, "refuses",
        'Invalid value: "v1": missing from spec.versions',
    )  # fmt: skip
    shown = text.render(
        replace(WITNESSED, findings=(replace(PROVEN, witness=rollback),)), Terminal(witnesses=True)
    )
    assert (
        "witness: apply-old-crd (stored at v1alpha1): the apiserver refuses: Invalid value:"
        ' "v1": missing from spec.versions' in shown
    )


def test_a_witness_stored_once_the_new_crd_is_applied_says_so() -> None:
    """UG110: written at v1 after the upgrade, copied at v2."""
    after = replace(WITNESS, read_version="v2", stored_under="new")
    outcome = replace(WITNESSED, findings=(replace(PROVEN, witness=after),))
    shown = text.render(outcome, Terminal(witnesses=True))
    assert "witness: create at v2 (stored at v1 once the new CRD is applied)" in shown
    assert json.loads(REPORTERS["json"](outcome))["findings"][0]["witness"]["stored_under"] == "new"


def test_an_apply_witness_shows_each_apply_before_the_objects() -> None:
    """UG215's witness: the server-side applies made while the old CRD is live, by manager."""
    applied = replace(
        WITNESS,
        operation="apply",
        message='conflict with "witness-b": .spec.mode',
        object=WITNESS.stored,
        applied=({"manager": "witness-a", "object": WITNESS.stored},
                 {"manager": "witness-b", "object": WITNESS.stored}),
    )  # fmt: skip
    outcome = replace(WITNESSED, findings=(replace(PROVEN, witness=applied),))
    shown = text.render(outcome, Terminal(witnesses=True)).splitlines()
    labels = [line.split(":")[0].strip() for line in shown if line.startswith(" " * 12)]
    assert labels == ["applied by witness-a", "applied by witness-b", "stored", "object"]
    document = json.loads(REPORTERS["json"](outcome))
    assert [entry["manager"] for entry in document["findings"][0]["witness"]["applied"]] == [
        "witness-a",
        "witness-b",
    ]
