"""A report for a pull-request comment: a verdict line, then one table per CRD."""

from __future__ import annotations

from itertools import groupby

from upgrade_guard.findings import Finding, Outcome
from upgrade_guard.report.json_report import summary

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


def render(outcome: Outcome) -> str:
    counts = summary(outcome)
    verdict = "**upgrade-guard: safe**" if outcome.safe else "**upgrade-guard: unsafe**"
    lines = [f"{verdict} — " + ", ".join(f"{n} {kind}" for kind, n in counts.items()), ""]
    lines += [f"Policy: `{outcome.policy}`", ""]
    if outcome.facts:
        lines += [f"- {label}: {_cell(fact)}" for label, fact in outcome.facts] + [""]
    for crd, findings in groupby(outcome.findings, key=lambda f: f.crd):
        lines += [
            f"### `{crd}`",
            "",
            "| severity | rule | version | path | finding |",
            "|---|---|---|---|---|",
        ]
        lines += [_row(finding) for finding in findings]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
