"""The hook's report, for `kubectl logs` and for the log Helm prints when a hook fails or
passes (the library's ``helm.sh/hook-output-log-policy: hook-succeeded,hook-failed``).

Helm 4.1.4 (``pkg/action/hooks.go``, ``outputLogsByPolicy``) reads the whole log of every
container of the hook's Pod (``pods/log``: stdout and stderr together, as ``kubectl logs``
shows it) and prints it through its logger as ONE line with ``\\n`` escaped. Whatever the
hook writes, on either stream, is on that line; so the log itself is bounded, and so is the
termination message (``kubectl describe``; Kubernetes keeps 4096 bytes of it).

Both are budgeted by harm. First the verdict, then every refusal, those that delete objects
first, then those that lose data on read, then those that refuse writes, then the rest
(``damage``); each is told as fully as leaves room for a line of every later one: with its
way out, else with its message and the objects it names, else by its place alone. Then the
warnings and infos, each whole while they fit. What is left out, or told in part, is
counted, and the last line says where the whole report is. An entry is never cut, so a
path shown is whole; a change repeated at many paths is told once, as ``diff``'s report
tells it, with the evidence of each of its places. Names and schema paths only: no stored
object's values.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from dataclasses import dataclass, field

from upgrade_guard import rules
from upgrade_guard.findings import Finding, Harm, Outcome
from upgrade_guard.images import DEPLOY_WITH
from upgrade_guard.judging import ACCEPTED
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.json_report import summary
from upgrade_guard.report.ways_out import UNASKED, Asked, accepting, again, dropping_acceptances
from upgrade_guard.rules import acceptance_unused, crd_deleted
from upgrade_guard.subjects import POLICY_NOTE

TERMINATION_LIMIT = 4096
# The log's bound: Helm prints it as one line, and 4096 bytes is about one screen of a
# 120-column terminal, so the verdict is still in sight above Helm's own lines. The
# same bound as the termination message, so both show about as much.
LOG_LIMIT = 4096
# Each refusal tells the person running helm what they can do now, and separately what the
# chart's authors should change: its rule's way_out and author, else these (a schema
# finding's). A finding's own notes ("now: ", "chart author: ") win, when its check worked
# them out from its facts (the image slot and the tag the chart pairs with).
_NOW_SCHEMA = (
    "set the field on the stored objects the evidence names (or migrate them), then upgrade"
    " again; or, if no stored object is hurt or you judge it harmless, accept it"
)
_AUTHOR_SCHEMA = (
    "if meant, declare it in the policy (declared-breaks: crd, rule, path, schema-version,"
    " reason); else keep the live schema"
)


def _legend(asked: Asked) -> str:
    return (
        "each refusal: now (what you can do), chart author (what the chart should change),"
        f" accept (its entry: {accepting(asked)} lets the findings you name through, for this"
        " chart version only)"
    )


def _own(finding: Finding, prefix: str) -> str | None:
    return next((n.removeprefix(prefix) for n in finding.notes if n.startswith(prefix)), None)


def way_out(finding: Finding, asked: Asked) -> str:
    """What the person running helm can do now: a command for what they ran where the
    finding's check worked out the values to set (``images.DEPLOY_WITH`` notes)."""
    setting = _own(finding, DEPLOY_WITH)
    if setting:
        return (
            f"`{again(asked, setting)}` (deploys the image that goes with this chart whatever"
            " kept the old one), or install the chart that goes with the deployed image"
        )
    if finding.code == acceptance_unused.RULE.code:
        return (
            f"drop the acceptances: {dropping_acceptances(asked)}; or give them again for this"
            " chart version from this report's accept: lines"
        )
    rule = rules.lookup(finding.code)
    return _own(finding, "now: ") or (rule and rule.way_out) or _NOW_SCHEMA


def author_fix(finding: Finding) -> str:
    """What the chart's authors should change."""
    rule = rules.lookup(finding.code)
    return _own(finding, "chart author: ") or (rule and rule.author) or _AUTHOR_SCHEMA


def accept_entry(finding: Finding, chart_version: str | None) -> str:
    """The value entry that accepts exactly this finding for this chart version."""
    fields = {"chart": chart_version or "VERSION", "code": finding.code}
    found = (("crd", finding.crd), ("version", finding.version), ("path", finding.path))
    fields |= {k: v for k, v in found if v}
    return json.dumps(fields, separators=(",", ":"))


def accepted(finding: Finding) -> bool:
    return (finding.excused or "").startswith(ACCEPTED)


def _label(finding: Finding) -> str:
    if accepted(finding):
        return "ACCEPTED"
    return "excused" if finding.excused else str(finding.severity)


def finding_line(finding: Finding) -> str:
    where = grouping.place(finding)
    return f"{_label(finding)} {finding.code} {finding.rule} {where}: {finding.message}"


def verdict_line(outcome: Outcome, phase: str, checked: int) -> str:
    counts = summary(outcome)
    tally = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    state = "SAFE" if outcome.safe else "REFUSED"
    taken = sum(accepted(finding) for finding in outcome.findings)
    if taken:
        state += f" with {taken} finding{'' if taken == 1 else 's'} ACCEPTED by the cluster admin"
    crds = "CRD" if checked == 1 else "CRDs"
    return f"upgrade-guard {state}: {phase} of {checked} {crds}; {tally or 'no findings'}"


def _tail(
    finding: Finding, asked: Asked, places: tuple[Finding, ...] = (), every: bool = True
) -> list[str]:
    """A refusal's ways out with the accept entry of each of ``places`` (a repeated
    change's findings; unless ``every``, the first and how many there are); an excused
    finding's excuse."""
    if finding.refuses:
        lines = [f"  now: {way_out(finding, asked)}", f"  chart author: {author_fix(finding)}"]
        if finding.code != acceptance_unused.RULE.code:
            places = places or (finding,)
            each = f" (one entry per place: {len(places)})" if len(places) > 1 else ""
            told = places if every else places[:1]
            lines += [f"  accept: {accept_entry(f, asked.chart_version)}" for f in told]
            lines[-len(told)] += each
        return lines
    return (
        [f"  {'' if accepted(finding) else 'excused: '}{finding.excused}"]
        if finding.excused
        else []
    )


class Damage(enum.IntEnum):
    """What a refusal does to stored objects, most harmful first: the order the bounded
    reports tell refusals in."""

    DELETED = 0  # the objects are deleted (their CRD is)
    READ = 1  # they read back changed: data lost on read
    WRITE = 2  # their writes are refused
    OTHER = 3


_DAMAGE = {
    Harm.CHANGED_ON_READ: Damage.READ,
    Harm.BOTH: Damage.READ,  # ranked by its read: the worse of the two
    Harm.REFUSED_ON_WRITE: Damage.WRITE,
}


def damage(finding: Finding) -> Damage:
    """What ``finding`` does to stored objects: its rule's harm, a deletion of the CRD
    (UG608) first of all."""
    if finding.code == crd_deleted.RULE.code:
        return Damage.DELETED
    rule = rules.lookup(finding.code)
    return _DAMAGE.get(rule.harm, Damage.OTHER) if rule is not None else Damage.OTHER


@dataclass(frozen=True)
class _Entry:
    """One entry of a bounded report (a repeated change, or a finding) in the forms it may
    take, fullest first: a refusal's with its ways out (a repeated change's with every
    place's accept entry, then with its first's); with its message and the objects it
    names; its places alone (a repeated change's first few, then its first). The first
    ``with_ways`` forms hold the ways out."""

    findings: tuple[Finding, ...]
    forms: tuple[list[str], ...]
    with_ways: int = 1

    def without_ways(self) -> _Entry:
        return _Entry(self.findings, self.forms[self.with_ways :], 0)


def _short_line(finding: Finding) -> str:
    return f"{_label(finding)} {finding.code} {finding.rule} {grouping.place(finding)}"


def _group_entry(group: Group, asked: Asked) -> _Entry:
    first = group.first
    crds = len(group.crds)
    short = (
        f"{_label(first)} {first.code} {first.rule}, {group.count} times in {crds}"
        f" CRD{'' if crds == 1 else 's'}"
    )
    at = f"  at {group.places_line()}"
    named = [f"{short}: {first.message}", at, *_group_evidence(group)]
    more = group.count - 1
    placed = f"{short}, at {grouping.place(first)}" + (f" and {more} more" if more else "")
    every = named + _tail(first, asked, group.findings)
    first_only = named + _tail(first, asked, group.findings, every=False)
    forms = (every, first_only, named, [short, at], [placed])
    return _Entry(group.findings, forms, with_ways=2)


def _single_entry(finding: Finding, asked: Asked) -> _Entry:
    named = [finding_line(finding), *_evidence_lines(finding)]
    forms = (named + _tail(finding, asked), named, [_short_line(finding)])
    return _Entry((finding,), forms)


def _entries(outcome: Outcome, asked: Asked) -> tuple[list[_Entry], list[_Entry]]:
    """The refusals, by harm, then in the order found; and the rest: what the admin
    accepted, then by severity, the excused last."""
    groups, singles = grouping.grouped(outcome.findings)
    found = {id(finding): index for index, finding in enumerate(outcome.findings)}
    entries = [_group_entry(g, asked) for g in groups]
    entries += [_single_entry(f, asked) for f in singles]
    refusals = [e for e in entries if e.findings[0].refuses]
    refusals.sort(key=lambda e: (damage(e.findings[0]), found[id(e.findings[0])]))
    rest = [e for e in entries if not e.findings[0].refuses]
    rest.sort(
        key=lambda e: (
            not accepted(e.findings[0]),
            -e.findings[0].severity,
            e.findings[0].excused is not None,
            found[id(e.findings[0])],
        )
    )
    return refusals, rest


@dataclass
class _Laid:
    lines: list[str] = field(default_factory=list)
    left: list[Finding] = field(default_factory=list)  # what no line tells
    partly: int = 0  # refusals told in a shorter form than their first


def _lay(refusals: list[_Entry], rest: list[_Entry], room: int) -> _Laid:
    """The refusals in order, each in the fullest form that leaves room for every later
    one's shortest; when even the shortest forms do not all fit, as many as fit (the first
    always), the others counted. Then the rest, whole entries while they fit."""
    laid = _Laid()
    used = 0
    later = sum(_size(entry.forms[-1]) for entry in refusals)
    going = True  # until an entry does not fit: the later ones are left out
    for index, entry in enumerate(refusals):
        later -= _size(entry.forms[-1])
        fitting = [form for form in entry.forms if used + _size(form) + later <= room]
        form = fitting[0] if fitting else entry.forms[-1]
        going = going and (bool(fitting) or not index or used + _size(form) <= room)
        if not going:
            laid.left += entry.findings
            continue
        laid.lines += form
        laid.partly += form is not entry.forms[0]
        used += _size(form)
    for entry in rest:
        going = going and used + _size(entry.forms[0]) <= room
        if not going:
            laid.left += entry.findings
            continue
        laid.lines += entry.forms[0]
        used += _size(entry.forms[0])
    return laid


def _bounded(
    head: list[str],
    refusals: list[_Entry],
    rest: list[_Entry],
    ending: list[str],
    whole: str,
    limit: int,
    unlisted: list[Finding] | None = None,
) -> str:
    """head, the entries laid within ``limit`` bytes with ``ending``, and when any is left
    out (``unlisted`` always is) or told in part, what was and, last, where the whole
    report is."""
    room = limit - _size(head) - _size(ending)
    laid = _lay(refusals, rest, room)
    unlisted = unlisted or []
    if laid.left or laid.partly or unlisted:
        everything = [f for entry in [*refusals, *rest] for f in entry.findings]
        reserve = _size([_counted([*everything, *unlisted], len(refusals)), whole])
        laid = _lay(refusals, rest, room - reserve)
        ending = [_counted([*laid.left, *unlisted], laid.partly), *ending, whole]
    return "\n".join(head + laid.lines + ending) + "\n"


def whole_report(phase: str, asked: Asked) -> str:
    """Where every finding is told, unbounded: the Helm plugin runs the same checks."""
    operation = phase.removeprefix("pre-")
    target = (asked.revision or "REVISION") if operation == "rollback" else "CHART [your flags]"
    release = asked.release or "RELEASE"
    namespace = f" -n {asked.namespace}" if asked.namespace else ""
    return (
        f"the whole report: `helm guard {operation} {release}{namespace} {target}` (the"
        " helm-guard plugin runs these checks and prints every finding)"
    )


def render(
    outcome: Outcome,
    phase: str,
    checked: int,
    footer: str = "",
    limit: int = LOG_LIMIT,
    asked: Asked = UNASKED,
) -> str:
    """The report within ``limit`` bytes (unless its first refusal's place alone is longer:
    a line is never cut, so a path stays whole): the verdict and the outcome's facts (a note
    on the cluster's minor), with refusals the line saying how to read their ways out, every
    refusal by harm, the rest while it fits, ``footer``.
    What is left out or told in part is counted, and the last line says where the whole
    report is (``asked``: what the person ran, for the commands of the ways out)."""
    head = [verdict_line(outcome, phase, checked)]
    head += [f"{label}: {fact}" for label, fact in outcome.facts]
    if not outcome.safe:
        head.append(_legend(asked))
    refusals, rest = _entries(outcome, asked)
    ending = [footer] if footer else []
    return _bounded(head, refusals, rest, ending, whole_report(phase, asked), limit)


def _size(lines: list[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)


def _counted(left: list[Finding], partly: int) -> str:
    """What a bounded report leaves out: the refusals by code, the rest by kind, and how
    many refusals it tells in part."""
    codes = Counter(finding.code for finding in left if finding.refuses)
    kinds = Counter(
        "excused" if finding.excused else str(finding.severity)
        for finding in left
        if not finding.refuses
    )
    parts = []
    if codes:
        told = ", ".join(code if n == 1 else f"{code} x{n}" for code, n in codes.items())
        parts.append(f"refusals {told}")
    if kinds:
        parts.append(", ".join(f"{kinds[kind]} {kind}" for kind in _KINDS if kinds[kind]))
    if partly:
        parts.append(f"the rest of {partly} refusal{'' if partly == 1 else 's'} told in part")
    return f"... left out here: {'; '.join(parts)}"


_KINDS = ("error", "warning", "info", "excused")


_SHOWN_NOTES = ("evidence: ", "declared break ", POLICY_NOTE)


def _evidence_lines(finding: Finding) -> list[str]:
    """What the stored objects showed (names and counts only, or why they could not be
    checked), and the declared breaks of other releases that would have excused the
    finding."""
    return [f"  {note}" for note in finding.notes if note.startswith(_SHOWN_NOTES)]


def _group_evidence(group: Group) -> list[str]:
    """The same for each place of a repeated change, each note once."""
    return [f"  {note}" for note in group.notes() if note.startswith(_SHOWN_NOTES)]


def termination_summary(outcome: Outcome, phase: str, checked: int, asked: Asked = UNASKED) -> str:
    """The termination message, within Kubernetes' 4096 bytes: the verdict, then every
    refusal by harm (with its message and the objects it names while they fit, else its
    place alone), the rest counted, and where the whole report is."""
    refusals, rest = _entries(outcome, asked)
    told = [entry.without_ways() for entry in refusals]
    counted = [finding for entry in rest for finding in entry.findings]
    head = [verdict_line(outcome, phase, checked)]
    whole = whole_report(phase, asked)
    return fit(_bounded(head, told, [], [], whole, TERMINATION_LIMIT, counted))


def fit(text: str) -> str:
    """text cut to the termination message limit (a long single line too)."""
    data = text.encode()
    if len(data) <= TERMINATION_LIMIT:
        return text
    return data[: TERMINATION_LIMIT - 4].decode("utf-8", "ignore") + "...\n"
