"""The hook's report: verdict first, grouped as diff's, refusals with the way out first, kept
to a bound Helm's one-line log stays readable at, and a termination-log summary that stays
within Kubernetes' 4096 bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import hook_log

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
    summary = hook_log.termination_summary(outcome, "pre-upgrade", 1911)
    assert len(summary.encode()) <= 4096
    lines = summary.splitlines()
    assert lines[0].startswith("upgrade-guard REFUSED: pre-upgrade of 1911 CRDs")
    shown = len(lines) - 2
    assert lines[-1] == f"... and {refusing - shown} more refusals"


def test_the_log_starts_with_the_verdict_and_gives_each_way_out() -> None:
    """Each refusal says what the person running helm can do now, what the chart's authors
    should change, and the entry that accepts exactly it for this chart version."""
    stored = Finding("UG104", "stored-version-removed", Severity.ERROR, "w.example.com",
                     None, None, "stored version v1alpha1 removed")  # fmt: skip
    note = Finding("UG606", "first-adoption", Severity.INFO, None, None, None, "adopted")
    text = hook_log.render(
        Outcome((stored, note), 1), "pre-upgrade", 1, "read 1 CRD", chart_version="1.19.0"
    )
    assert text.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 1 error, 1 info",
        hook_log._legend(hook_log.ACCEPT_BY_VALUES),
        "error UG104 stored-version-removed w.example.com: stored version v1alpha1 removed",
        "  now: migrate storage: rewrite every object at the storage version, remove the old"
        " version from status.storedVersions, then upgrade again",
        "  chart author: keep serving the stored version until every object is migrated",
        '  accept: {"chart":"1.19.0","code":"UG104","crd":"w.example.com"}',
        "info UG606 first-adoption (all CRDs): adopted",
        "read 1 CRD",
    ]


def test_a_long_message_is_cut_to_the_limit() -> None:
    assert len(hook_log.fit("x" * 10_000).encode()) <= 4096
    assert hook_log.fit("short\n") == "short\n"


def test_a_small_refusal_is_printed_whole() -> None:
    """Paired with the large one below: under the bound nothing is left out."""

    def required(path: str) -> Finding:
        return Finding(
            "UG212", "required-added", Severity.ERROR, "w.example.com", "v1", path, "required added"
        )

    evidence = ("evidence: 2 stored objects affected: a, b",)
    removed = Finding(
        "UG201",
        "property-removed",
        Severity.ERROR,
        "w.example.com",
        "v1",
        "spec.c",
        "removed",
        notes=evidence,
    )
    findings = (required("spec.a"), required("spec.b"), removed)
    text = hook_log.render(Outcome(findings, 1), "pre-upgrade", 1, "read 1 CRD")
    assert text.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 3 error",
        hook_log._legend(hook_log.ACCEPT_BY_VALUES),
        "error UG212 required-added, 2 times in 1 CRD: required added",
        "  at w.example.com v1 spec.a, w.example.com v1 spec.b",
        f"  now: {hook_log.way_out(findings[0])}",
        f"  chart author: {hook_log.author_fix(findings[0])}",
        '  accept: {"chart":"VERSION","code":"UG212","crd":"w.example.com","version":"v1",'
        '"path":"spec.a"} (one entry per place: 2)',
        "error UG201 property-removed w.example.com v1 spec.c: removed",
        "  evidence: 2 stored objects affected: a, b",
        f"  now: {hook_log.way_out(findings[2])}",
        f"  chart author: {hook_log.author_fix(findings[2])}",
        '  accept: {"chart":"VERSION","code":"UG201","crd":"w.example.com","version":"v1",'
        '"path":"spec.c"}',
        "read 1 CRD",
    ]
    assert "not shown" not in text


def test_a_large_refusal_is_bounded_with_what_is_left_and_where() -> None:
    outcome = _outcome_of(GOLDEN / "provider-upjet-aws" / "v1.23.0__v2.0.0.json")
    whole = hook_log.render(outcome, "pre-upgrade", 1911, limit=10**9)
    text = hook_log.render(outcome, "pre-upgrade", 1911, "read 1911 CRDs")
    assert len(whole.encode()) > 2 * hook_log.LOG_LIMIT
    assert len(text.encode()) <= hook_log.LOG_LIMIT
    lines = text.splitlines()
    assert lines[0].startswith("upgrade-guard REFUSED: pre-upgrade of 1911 CRDs")
    assert lines[1] == hook_log._legend(hook_log.ACCEPT_BY_VALUES)
    assert lines[2].startswith("error ")  # the first refusal right after the verdict
    assert lines[-1] == "read 1911 CRDs"
    left_out = re.fullmatch(
        r"\.\.\. (\d+) more findings not shown \((\d+) refusing\): (.*)", lines[-2]
    )
    assert left_out, lines[-2]
    assert "termination message (kubectl describe pod)" in left_out[3]
    # what is shown and what is counted as left out are every finding, exactly once
    shown = sum(int(m[1]) for m in re.finditer(r", (\d+) times in ", text))
    shown += sum(1 for line in lines[2:-2] if line[0] != " " and " times in " not in line)
    assert shown + int(left_out[1]) == len(outcome.findings)
    # every path shown is whole: each place on an "at" line is a finding's own
    places = {" ".join(p for p in (f.crd, f.version, f.path) if p) for f in outcome.findings}
    for line in lines:
        if line.startswith("  at "):
            listed = re.sub(r" and \d+ more$", "", line[len("  at ") :])
            assert all(place in places for place in listed.split(", ")), line


def test_the_bound_never_cuts_the_first_refusal() -> None:
    path = "spec." + ".".join(["segment"] * 600)
    long = Finding("UG212", "required-added", Severity.ERROR, "w.example.com", "v1", path, "x")
    text = hook_log.render(Outcome((long,), 1), "pre-upgrade", 1)
    assert path in text.splitlines()[2]
