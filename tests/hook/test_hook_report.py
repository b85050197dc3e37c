"""The hook's report: verdict first, grouped as diff's, refusals with the way out first, kept
to a bound Helm's one-line log stays readable at, and a termination-log summary that stays
within Kubernetes' 4096 bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import grouping, hook_log
from upgrade_guard.report.ways_out import UNASKED, Asked

APP = Asked(release="app")
AWS = Asked(release="aws")
V119 = Asked(chart_version="1.19.0")

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
    """1741 refusals in 18 entries (changes repeated at many paths told once): every entry
    is in the termination message, the most harmful with its message, the others by place."""
    outcome = _outcome_of(GOLDEN / "provider-upjet-aws" / "v1.23.0__v2.0.0.json")
    refusing = sum(f.refuses for f in outcome.findings)
    assert refusing > 1000
    summary = hook_log.termination_summary(outcome, "pre-upgrade", 1911, AWS)
    assert len(summary.encode()) <= 4096
    lines = summary.splitlines()
    assert lines[0].startswith("upgrade-guard REFUSED: pre-upgrade of 1911 CRDs")
    assert lines[1].startswith("error UG201 , 1493 times in 953 CRDs: ")  # read: first
    told = [line for line in lines[1:] if line.startswith("error ")]
    groups, singles = grouping.grouped(outcome.findings)
    assert len(told) == len(groups) + len(singles) == 18
    assert lines[-2:] == [
        "... left out here: the rest of 12 refusals told in part",
        hook_log.whole_report("pre-upgrade", AWS),
    ]


def test_the_log_starts_with_the_verdict_and_gives_each_way_out() -> None:
    """Each refusal says what the person running helm can do now, what the chart's authors
    should change, and the entry that accepts exactly it for this chart version."""
    stored = Finding("UG104", "stored-version-removed", Severity.ERROR, "w.example.com",
                     None, None, "stored version v1alpha1 removed")  # fmt: skip
    note = Finding("UG606", "first-adoption", Severity.INFO, None, None, None, "adopted")
    text = hook_log.render(Outcome((stored, note), 1), "pre-upgrade", 1, "read 1 CRD", asked=V119)
    assert text.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 1 error, 1 info",
        hook_log._legend(V119),
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
        hook_log._legend(UNASKED),
        "error UG212 required-added, 2 times in 1 CRD: required added",
        "  at w.example.com v1 spec.a, w.example.com v1 spec.b",
        f"  now: {hook_log.way_out(findings[0], UNASKED)}",
        f"  chart author: {hook_log.author_fix(findings[0])}",
        '  accept: {"chart":"VERSION","code":"UG212","crd":"w.example.com","version":"v1",'
        '"path":"spec.a"} (one entry per place: 2)',
        '  accept: {"chart":"VERSION","code":"UG212","crd":"w.example.com","version":"v1",'
        '"path":"spec.b"}',
        "error UG201 property-removed w.example.com v1 spec.c: removed",
        "  evidence: 2 stored objects affected: a, b",
        f"  now: {hook_log.way_out(findings[2], UNASKED)}",
        f"  chart author: {hook_log.author_fix(findings[2])}",
        '  accept: {"chart":"VERSION","code":"UG201","crd":"w.example.com","version":"v1",'
        '"path":"spec.c"}',
        "read 1 CRD",
    ]
    assert "not shown" not in text


def test_a_large_refusal_is_bounded_with_every_refusal_and_where_the_whole_is() -> None:
    outcome = _outcome_of(GOLDEN / "provider-upjet-aws" / "v1.23.0__v2.0.0.json")
    whole = hook_log.render(outcome, "pre-upgrade", 1911, limit=10**9)
    text = hook_log.render(outcome, "pre-upgrade", 1911, "read 1911 CRDs", asked=AWS)
    assert len(whole.encode()) > hook_log.LOG_LIMIT
    assert len(text.encode()) <= hook_log.LOG_LIMIT
    lines = text.splitlines()
    assert lines[0].startswith("upgrade-guard REFUSED: pre-upgrade of 1911 CRDs")
    assert lines[1] == hook_log._legend(AWS)
    assert lines[2].startswith("error UG201 ")  # the first refusal right after the verdict
    assert lines[-3:] == [
        "... left out here: the rest of 18 refusals told in part",
        "read 1911 CRDs",
        hook_log.whole_report("pre-upgrade", AWS),
    ]
    # every finding is told: each entry's head counts the findings it tells
    shown = sum(int(m[1]) for m in re.finditer(r", (\d+) times in ", text))
    shown += sum(1 for line in lines[2:-3] if line[0] != " " and " times in " not in line)
    assert shown == len(outcome.findings)
    # every path shown is whole: each place on an "at" line is a finding's own
    places = {" ".join(p for p in (f.crd, f.version, f.path) if p) for f in outcome.findings}
    for line in lines:
        listed = re.sub(r" and \d+ more$", "", line.partition(" at ")[2])
        assert all(place in places for place in listed.split(", ") if listed), line


def test_the_bound_never_cuts_the_first_refusal() -> None:
    path = "spec." + ".".join(["segment"] * 600)
    long = Finding("UG212", "required-added", Severity.ERROR, "w.example.com", "v1", path, "x")
    text = hook_log.render(Outcome((long,), 1), "pre-upgrade", 1)
    assert path in text.splitlines()[2]


def _deleted(crd: str, names: str) -> Finding:
    message = (
        "release app-1.0.0 (revision 3) applies this CRD and this release does not: Helm"
        f" deletes it, and with it the 2 object(s) stored in it ({names})"
    )
    return Finding("UG608", "crd-deleted", Severity.ERROR, crd, None, None, message)


def _warning(index: int) -> Finding:
    message = f"maximum tightened: <= {index + 10} -> <= 5"
    path = f"spec.field{index:02}"
    return Finding("UG208", "bound-tightened", Severity.WARNING, "w.example.com", "v1", path,
                   message)  # fmt: skip


def test_a_deletion_among_fifty_warnings_is_told_first_and_the_warnings_counted() -> None:
    """Issue 34: the 4 KiB held warnings and left out the CRD Helm was about to delete."""
    deleted = _deleted("backups.example.com", "ns/nightly, ns/weekly")
    info = Finding("UG606", "first-adoption", Severity.INFO, None, None, None, "adopted")
    outcome = Outcome((*map(_warning, range(50)), info, deleted), 1)
    text = hook_log.render(outcome, "pre-upgrade", 2, "read 2 CRDs", asked=APP)
    assert len(text.encode()) <= hook_log.LOG_LIMIT
    lines = text.splitlines()
    shown = 30  # the warnings that fit whole after the deletion and its way out
    assert lines == [
        "upgrade-guard REFUSED: pre-upgrade of 2 CRDs; 1 error, 50 warning, 1 info",
        hook_log._legend(APP),
        f"error UG608 crd-deleted backups.example.com: {deleted.message}",
        f"  now: {hook_log.way_out(deleted, UNASKED)}",
        f"  chart author: {hook_log.author_fix(deleted)}",
        '  accept: {"chart":"VERSION","code":"UG608","crd":"backups.example.com"}',
        *(hook_log.finding_line(_warning(i)) for i in range(shown)),
        f"... left out here: {50 - shown} warning, 1 info",
        "read 2 CRDs",
        "the whole report: `helm guard upgrade app CHART [your flags]` (the helm-guard plugin"
        " runs these checks and prints every finding)",
    ]


def test_nothing_left_out_needs_no_pointer_to_the_whole_report() -> None:
    """Paired with the one above: under the bound the log is the whole report."""
    outcome = Outcome((_warning(0), _warning(1)), 1)
    text = hook_log.render(outcome, "pre-upgrade", 1, "read 1 CRD", asked=APP)
    assert text.splitlines() == [
        "upgrade-guard SAFE: pre-upgrade of 1 CRD; 2 warning",
        hook_log.finding_line(_warning(0)),
        hook_log.finding_line(_warning(1)),
        "read 1 CRD",
    ]


@pytest.mark.parametrize(
    ("phase", "release", "command"),
    [
        ("pre-upgrade", "app", "helm guard upgrade app CHART [your flags]"),
        ("pre-install", "app", "helm guard install app CHART [your flags]"),
        ("pre-rollback", "app", "helm guard rollback app REVISION"),
        ("pre-upgrade", None, "helm guard upgrade RELEASE CHART [your flags]"),
    ],
)
def test_the_last_line_says_where_the_whole_report_is(
    phase: str, release: str | None, command: str
) -> None:
    outcome = Outcome(tuple(map(_warning, range(50))), 1)
    text = hook_log.render(outcome, phase, 1, asked=Asked(release=release))
    assert text.splitlines()[-1].startswith(f"the whole report: `{command}` ")
    summary = hook_log.termination_summary(outcome, phase, 1, Asked(release=release))
    assert summary.splitlines()[-2:] == [
        "... left out here: 50 warning",
        hook_log.whole_report(phase, Asked(release=release)),
    ]


def _refusal(code: str, rule: str, path: str | None, *notes: str, message: str = "here") -> Finding:
    version = "v1" if path else None
    return Finding(code, rule, Severity.ERROR, "w.example.com", version, path,
                   f"{rule} {message}", notes=notes)  # fmt: skip


@pytest.mark.parametrize(
    ("finding", "harm"),
    [
        (_deleted("w.example.com", "a"), hook_log.Damage.DELETED),
        (_refusal("UG201", "property-removed", "spec.a"), hook_log.Damage.READ),
        (_refusal("UG212", "default-added", "spec.a"), hook_log.Damage.READ),
        (_refusal("UG217", "embedded-resource-changed", "spec.a"), hook_log.Damage.READ),
        (_refusal("UG202", "required-added", "spec.a"), hook_log.Damage.WRITE),
        (_refusal("UG207", "enum-restricted", "spec.a"), hook_log.Damage.WRITE),
        (_refusal("UG104", "stored-version-removed", None), hook_log.Damage.OTHER),
        (_refusal("UG215", "map-type-changed", "spec.a"), hook_log.Damage.OTHER),
    ],
)
def test_harm_of_a_refusal(finding: Finding, harm: hook_log.Damage) -> None:
    assert hook_log.damage(finding) == harm


def test_refusals_are_told_by_harm_then_in_the_order_found() -> None:
    found = (
        _refusal("UG104", "stored-version-removed", None),
        _refusal("UG202", "required-added", "spec.w"),
        _refusal("UG201", "property-removed", "spec.r"),
        _deleted("d.example.com", "ns/a, ns/b"),
        _refusal("UG207", "enum-restricted", "spec.e"),
    )
    summary = hook_log.termination_summary(Outcome(found, 2), "pre-upgrade", 2)
    assert summary.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 2 CRDs; 5 error",
        f"error UG608 crd-deleted d.example.com: {found[3].message}",
        "error UG201 property-removed w.example.com v1 spec.r: property-removed here",
        "error UG202 required-added w.example.com v1 spec.w: required-added here",
        "error UG207 enum-restricted w.example.com v1 spec.e: enum-restricted here",
        "error UG104 stored-version-removed w.example.com: stored-version-removed here",
    ]


def test_a_repeated_change_keeps_its_evidence_and_not_checkable_reasons() -> None:
    """Issue 34: "set the field on the stored objects the evidence names" under a grouped
    entry that printed no evidence."""
    affected = "evidence: 2 of 5 widgets affected: ns/a, ns/b; refused on CREATE"
    unchecked = "evidence: not checkable: objects are converted by a webhook"
    found = (
        _refusal("UG202", "required-added", "spec.a", affected),
        _refusal("UG202", "required-added", "spec.b", unchecked),
        _refusal("UG202", "required-added", "spec.c", unchecked),
    )
    text = hook_log.render(Outcome(found, 1), "pre-upgrade", 1)
    assert text.splitlines() == [
        "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 3 error",
        hook_log._legend(UNASKED),
        "error UG202 required-added, 3 times in 1 CRD: required-added here",
        "  at w.example.com v1 spec.a, w.example.com v1 spec.b, w.example.com v1 spec.c",
        f"  {affected} (at w.example.com v1 spec.a)",
        f"  {unchecked} (at w.example.com v1 spec.b, w.example.com v1 spec.c)",
        f"  now: {hook_log.way_out(found[0], UNASKED)}",
        f"  chart author: {hook_log.author_fix(found[0])}",
        '  accept: {"chart":"VERSION","code":"UG202","crd":"w.example.com","version":"v1",'
        '"path":"spec.a"} (one entry per place: 3)',
        *(
            f'  accept: {{"chart":"VERSION","code":"UG202","crd":"w.example.com","version":"v1",'
            f'"path":"spec.{p}"}}'
            for p in "bc"
        ),
    ]


def test_a_note_every_place_shares_is_told_once_without_places() -> None:
    unchecked = "evidence: not checkable: objects are converted by a webhook"
    found = tuple(_refusal("UG202", "required-added", p, unchecked) for p in ("spec.a", "spec.b"))
    lines = hook_log.render(Outcome(found, 1), "pre-upgrade", 1).splitlines()
    assert lines[3:5] == ["  at w.example.com v1 spec.a, w.example.com v1 spec.b", f"  {unchecked}"]


def _many_refusals(count: int, depth: int = 2) -> tuple[Finding, ...]:
    """Refusals with a long path each and the objects they hurt: their ways out do not all
    fit in the log, nor their evidence in the termination message."""
    long = ".".join(["deeplyNestedField"] * depth)
    return tuple(
        _refusal("UG202", "required-added", f"spec.item{i:02}.{long}",
                 f"evidence: 3 of 9 widgets affected: ns/w{i}-a, ns/w{i}-b, ns/w{i}-c",
                 message=f"without a default ({i})")
        for i in range(count)
    )  # fmt: skip


def test_when_the_refusals_alone_exceed_the_bound_each_keeps_its_place_line() -> None:
    """The first refusals whole, the later told by message and objects, the last by place
    alone: each left room for every later one's place line. Nothing is cut mid-entry."""
    found = _many_refusals(12)
    text = hook_log.render(Outcome(found, 1), "pre-upgrade", 1, asked=APP)
    assert len(text.encode()) <= hook_log.LOG_LIMIT
    lines = text.splitlines()
    whole, named = 4, 2  # the refusals told with their ways out; with their objects
    expected = [verdict := lines[0], hook_log._legend(APP)]
    for i, finding in enumerate(found):
        expected.append(hook_log.finding_line(finding) if i < whole + named
                        else f"error UG202 required-added {grouping.place(finding)}")  # fmt: skip
        expected += [f"  {finding.notes[0]}"] if i < whole + named else []
        expected += hook_log._tail(finding, APP) if i < whole else []
    expected += [
        f"... left out here: the rest of {12 - whole} refusals told in part",
        hook_log.whole_report("pre-upgrade", APP),
    ]
    assert verdict == "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 12 error"
    assert lines == expected


def test_the_termination_message_holds_every_refusal_line() -> None:
    found = (*_many_refusals(20), *map(_warning, range(50)))
    summary = hook_log.termination_summary(Outcome(found, 1), "pre-upgrade", 1, APP)
    assert len(summary.encode()) <= hook_log.TERMINATION_LIMIT
    lines = summary.splitlines()
    assert lines[0] == "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 20 error, 50 warning"
    places = [line.split(" ", 3)[3].partition(": ")[0] for line in lines if line[0] != " "]
    assert places[1:-2] == [grouping.place(f) for f in found[:20]]
    told = sum(line.startswith("  evidence: ") for line in lines)
    assert told == 19
    assert lines[-2:] == [
        "... left out here: 50 warning; the rest of 1 refusal told in part",
        hook_log.whole_report("pre-upgrade", APP),
    ]


def test_past_every_place_line_the_refusals_left_out_are_counted_by_code() -> None:
    """The first refusal is always told; the bound is never exceeded after it."""
    found = _many_refusals(60, depth=6)
    summary = hook_log.termination_summary(Outcome(found, 1), "pre-upgrade", 1)
    assert len(summary.encode()) <= hook_log.TERMINATION_LIMIT
    lines = summary.splitlines()
    told = len(lines) - 3
    assert 0 < told < 60
    assert (
        lines[-2] == f"... left out here: refusals UG202 x{60 - told}; the rest of {told}"
        " refusals told in part"
    )
