"""The hook's report, for `kubectl logs` and for the log Helm prints when a hook fails.

Helm 4.1.4 (``pkg/action/hooks.go``, ``outputLogsByPolicy``) reads the whole log of every
container of the hook's Pod (``pods/log``: stdout and stderr together, as ``kubectl logs``
shows it) and prints it through its logger as ONE line with ``\\n`` escaped. Whatever the
hook writes, on either stream, is on that line; so the log itself is bounded. It is grouped
as ``diff``'s report is (a change repeated at many paths told once, with its count and first
places), the verdict first, then the refusals, each with the way out, then the rest. Blocks
are kept or left out whole, so a path shown is never cut. What the bound leaves out is
counted on the last line, with where to read it. The summary for the termination log
(``kubectl describe``) stays under Kubernetes' 4096 bytes. Names and schema paths only: no
stored object's values.
"""

from __future__ import annotations

import json

from upgrade_guard import rules
from upgrade_guard.findings import Finding, Outcome
from upgrade_guard.judging import ACCEPTED
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.json_report import summary
from upgrade_guard.rules import acceptance_unused

TERMINATION_LIMIT = 4096
# The log's bound: Helm prints it as one line, and 4096 bytes is about one screen of a
# 120-column terminal, so the verdict is still in sight above Helm's own error line. The
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
# How the admin passes the acceptances: the library's value (the hook), or the plugin's option.
ACCEPT_BY_VALUES = (
    "helm upgrade RELEASE CHART --reuse-values --set-json 'upgrade-guard.accept=[ENTRY,...]'"
)


def _legend(accepting: str) -> str:
    return (
        "each refusal: now (what you can do), chart author (what the chart should change),"
        f" accept (its entry: {accepting} lets the findings you name through, for this chart"
        " version only)"
    )


def _own(finding: Finding, prefix: str) -> str | None:
    return next((n.removeprefix(prefix) for n in finding.notes if n.startswith(prefix)), None)


def way_out(finding: Finding) -> str:
    """What the person running helm can do now."""
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


def _tail(finding: Finding, chart_version: str | None, places: int = 1) -> list[str]:
    if finding.refuses:
        lines = [f"  now: {way_out(finding)}", f"  chart author: {author_fix(finding)}"]
        if finding.code != acceptance_unused.RULE.code:
            each = f" (one entry per place: {places})" if places > 1 else ""
            lines.append(f"  accept: {accept_entry(finding, chart_version)}{each}")
        return lines
    return (
        [f"  {'' if accepted(finding) else 'excused: '}{finding.excused}"]
        if finding.excused
        else []
    )


def _group_block(group: Group, chart_version: str | None) -> list[str]:
    first = group.first
    crds = len(group.crds)
    head = (
        f"{_label(first)} {first.code} {first.rule}, {group.count} times in {crds}"
        f" CRD{'' if crds == 1 else 's'}: {first.message}"
    )
    return [head, f"  at {group.places_line()}", *_tail(first, chart_version, group.count)]


def _single_block(finding: Finding, chart_version: str | None) -> list[str]:
    return [finding_line(finding), *_evidence_lines(finding), *_tail(finding, chart_version)]


def _blocks(
    outcome: Outcome, chart_version: str | None
) -> list[tuple[list[str], tuple[Finding, ...]]]:
    """Each block's lines and the findings it tells: refusals first (repeated changes, then
    the rest in their order), then the findings that do not refuse, grouped the same way."""
    groups, singles = grouping.grouped(outcome.findings)
    blocks: list[tuple[list[str], tuple[Finding, ...]]] = []
    for refusing in (True, False):
        blocks += [
            (_group_block(g, chart_version), g.findings)
            for g in groups
            if g.first.refuses is refusing
        ]
        blocks += [
            (_single_block(f, chart_version), (f,)) for f in singles if f.refuses is refusing
        ]
    return blocks


def render(
    outcome: Outcome,
    phase: str,
    checked: int,
    footer: str = "",
    limit: int = LOG_LIMIT,
    chart_version: str | None = None,
    accepting: str = ACCEPT_BY_VALUES,
) -> str:
    """The report, at most ``limit`` bytes unless its first block alone is longer (a block
    is never cut: its paths stay whole). With refusals, the line after the verdict says how
    to read their ways out."""
    lines = [verdict_line(outcome, phase, checked)]
    if not outcome.safe:
        lines.append(_legend(accepting))
    blocks = _blocks(outcome, chart_version)
    ending = [footer] if footer else []
    used = _size(lines) + _size(ending)
    for index, (block, _) in enumerate(blocks):
        left = [found for _, told in blocks[index:] for found in told]
        last = index == len(blocks) - 1
        room = 0 if last else len(_left_out_line(left).encode()) + 1
        if index and used + _size(block) + room > limit:
            lines.append(_left_out_line(left))
            break
        lines += block
        used += _size(block)
    return "\n".join(lines + ending) + "\n"


def _size(lines: list[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)


def _left_out_line(left: list[Finding]) -> str:
    refusing = sum(finding.refuses for finding in left)
    return (
        f"... {len(left)} more findings not shown ({refusing} refusing): this log is kept to"
        f" {LOG_LIMIT} bytes for Helm's one-line output; the Pod's termination message"
        " (kubectl describe pod) lists the refusals by code and path, and `upgrade-guard diff`"
        " on the live and the chart's CRDs prints every schema finding"
    )


def _evidence_lines(finding: Finding) -> list[str]:
    """What the stored objects showed (names and counts only), and the declared breaks of
    other releases that would have excused the finding."""
    shown = ("evidence: ", "declared break ")
    return [f"  {note}" for note in finding.notes if note.startswith(shown)]


def termination_summary(outcome: Outcome, phase: str, checked: int) -> str:
    """The verdict and as many refusals as fit in the termination message."""
    lines = [verdict_line(outcome, phase, checked)]
    refusing = [f for f in outcome.findings if f.refuses]
    used = len(lines[0].encode()) + 1
    for index, finding in enumerate(refusing):
        line = " ".join(p for p in (finding.code, grouping.place(finding)) if p)
        rest = len(refusing) - index
        tail = f"... and {rest} more refusals"
        if used + len(line.encode()) + 1 + len(tail.encode()) + 1 > TERMINATION_LIMIT:
            lines.append(tail)
            break
        lines.append(line)
        used += len(line.encode()) + 1
    return fit("\n".join(lines) + "\n")


def fit(text: str) -> str:
    """text cut to the termination message limit (a long single line too)."""
    data = text.encode()
    if len(data) <= TERMINATION_LIMIT:
        return text
    return data[: TERMINATION_LIMIT - 4].decode("utf-8", "ignore") + "...\n"
