"""The hook's report: verdict first, one line per finding with the way out, and a
termination-log summary that stays within Kubernetes' 4096 bytes."""

from __future__ import annotations

import json
from pathlib import Path

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import hook as hook_report

GOLDEN = Path(__file__).parents[1] / "golden" / "corpus"


def _outcome_of(golden: Path) -> Outcome:
    findings = [
        Finding(
            f["code"],
            f.get("rule", ""),
            Severity[f["severity"].upper()],
            f["crd"],
            f["version"],
            f["path"],
            f["message"],
        )
        for f in json.loads(golden.read_text())["findings"]
    ]
    return Outcome(tuple(findings), 1911)


def test_the_largest_corpus_diff_fits_the_termination_message() -> None:
    outcome = _outcome_of(GOLDEN / "provider-upjet-aws" / "v1.23.0__v2.0.0.json")
    refusing = sum(f.refuses for f in outcome.findings)
    assert refusing > 1000
    summary = hook_report.termination_summary(outcome, "pre-upgrade", 1911)
    assert len(summary.encode()) <= 4096
    lines = summary.splitlines()
    assert lines[0].startswith("upgrade-guard REFUSED: pre-upgrade of 1911 CRDs")
    assert lines[-1].endswith("more: see the Job's log")
    shown = len(lines) - 2
    assert lines[-1].startswith(f"... and {refusing - shown} more")


def test_the_log_starts_with_the_verdict_and_gives_a_way_out() -> None:
    stored = Finding("UG104", "stored-version-removed", Severity.ERROR, "w.example.com",
                     None, None, "stored version v1alpha1 removed")  # fmt: skip
    note = Finding("UG606", "first-adoption", Severity.INFO, "(all CRDs)", None, None, "adopted")
    text = hook_report.render(Outcome((stored, note), 1), "pre-upgrade", 1, "read 1 CRD")
    assert text.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 1 error, 1 info",
        "error UG104 stored-version-removed w.example.com: stored version v1alpha1 removed",
        "  way out: migrate storage first: rewrite every object at the storage version, remove"
        " the old version from status.storedVersions, then drop it from the chart",
        "info UG606 first-adoption (all CRDs): adopted",
        "read 1 CRD",
    ]


def test_a_long_message_is_cut_to_the_limit() -> None:
    assert len(hook_report.fit("x" * 10_000).encode()) <= 4096
    assert hook_report.fit("short\n") == "short\n"
