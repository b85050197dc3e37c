"""A report for a pull-request comment: a verdict line, a table of the changes that repeat,
then one table per CRD."""

from __future__ import annotations

from itertools import groupby

from upgrade_guard.findings import Finding, Outcome
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.json_report import tally
from upgrade_guard.report.terminal import PLAIN, Terminal

FIRST_CRDS = 5
_ICONS = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(finding: Finding) -> str:
    severity = "excused" if finding.excused else str(finding.severity)
    message = finding.message
    if finding.excused:
        message += f" (excused: {finding.excused})"
    for note in finding.notes:
        message += f" ({note})"
    path = f"`{finding.path}`" if finding.path else ""
    return (
        f"| {_ICONS.get(severity, '✔️')} {severity} | `{finding.code}` {finding.rule}"
        f" | {finding.version or ''} | {path} | {_cell(message)} |"
    )


def _group_row(group: Group) -> str:
    first = group.first
    severity = "excused" if first.excused else str(first.severity)
    message = first.message + (f" (excused: {first.excused})" if first.excused else "")
    for note in group.notes():
        message += f" ({note})"
    crds = ", ".join(f"`{crd}`" for crd in group.crds[:FIRST_CRDS])
    if len(group.crds) > FIRST_CRDS:
        crds += f" and {len(group.crds) - FIRST_CRDS} more"
    places = ", ".join(f"`{place}`" for place in group.places())
    if group.count > grouping.FIRST_PATHS:
        places += f" and {group.count - grouping.FIRST_PATHS} more"
    return (
        f"| {_ICONS.get(severity, '✔️')} {severity} | `{first.code}` {first.rule}"
        f" | {group.count} | {crds} | {places} | {_cell(message)} |"
    )


def render(outcome: Outcome, terminal: Terminal = PLAIN) -> str:
    verdict = "**upgrade-guard: safe**" if outcome.safe else "**upgrade-guard: unsafe**"
    lines = [f"{verdict} — {tally(outcome)}", ""]
    lines += [f"Policy: `{outcome.policy}`", ""]
    if outcome.facts:
        lines += [f"- {label}: {_cell(fact)}" for label, fact in outcome.facts] + [""]
    groups, singles = grouping.grouped(outcome.findings)
    if groups:
        lines += [
            "### Repeated changes",
            "",
            "| severity | rule | times | CRDs | first places | finding |",
            "|---|---|---|---|---|---|",
        ]
        lines += [_group_row(group) for group in groups]
        lines.append("")
    for crd, findings in groupby(singles, key=lambda f: f.crd):
        lines += [
            f"### `{crd}`" if crd else f"### {grouping.ALL_CRDS}",
            "",
            "| severity | rule | version | path | finding |",
            "|---|---|---|---|---|",
        ]
        lines += [_row(finding) for finding in findings]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
