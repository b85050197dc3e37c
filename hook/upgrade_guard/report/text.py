"""The report a person reads: grouped by CRD, most severe first. Prose wraps at the width
(80 columns when piped); a finding's head line (severity, code, rule, version, path) is never
broken, so a long path stays whole and copyable."""

from __future__ import annotations

import io
from itertools import groupby

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report.json_report import summary

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _indented(text: str, style: str = "") -> Padding:
    return Padding(Text(text, style=style), (0, 0, 0, 10), expand=False)


def _finding_lines(finding: Finding) -> list[RenderableType]:
    label = "excused" if finding.excused else str(finding.severity)
    style = "green" if finding.excused else _STYLES[finding.severity]
    where = " ".join(part for part in (finding.version, finding.path) if part)
    head = Text("  ")
    head.append(f"{label:<7}", style=style)
    head.append(f" {finding.code} {finding.rule}", style="bold")
    if where:
        head.append(f"  {where}")
    lines: list[RenderableType] = [head, _indented(finding.message)]
    if finding.excused:
        lines.append(_indented(f"excused: {finding.excused}", style="green"))
    lines.extend(_indented(f"note: {note}", style="dim") for note in finding.notes)
    return lines


def render(outcome: Outcome, color: bool, width: int = 80) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        soft_wrap=False,
    )
    if outcome.facts:
        facts = Table.grid()
        facts.add_column(width=11, no_wrap=True)
        facts.add_column()
        for label, fact in outcome.facts:
            facts.add_row(f"{label}:", fact)
        console.print(facts)
        console.print()
    for crd, findings in groupby(outcome.findings, key=lambda f: f.crd):
        console.print(Text(crd, style="bold underline"))
        for finding in findings:
            head, *prose = _finding_lines(finding)
            # the head (code, rule, version, path) stays one copyable line, however long
            console.print(head, no_wrap=True, crop=False, overflow="ignore")
            for line in prose:
                console.print(line)
        console.print()
    console.print(Text(f"policy: {outcome.policy}", style="dim"))
    counts = ", ".join(f"{n} {kind}" for kind, n in summary(outcome).items())
    verdict = Text(
        "SAFE" if outcome.safe else "UNSAFE", style="bold green" if outcome.safe else "bold red"
    )
    line = Text("upgrade-guard ")
    line.append(verdict)
    compared = outcome.crds_compared
    line.append(f" — {compared} CRD{'' if compared == 1 else 's'}; {counts}")
    console.print(line)
    return "\n".join(row.rstrip() for row in buffer.getvalue().split("\n"))


def render_plain(outcome: Outcome) -> str:
    return render(outcome, color=False)
