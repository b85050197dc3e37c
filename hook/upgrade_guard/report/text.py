"""The report a person reads: repeated changes once, then by CRD, most severe first. Prose
wraps at the width (80 columns when piped); a line naming a place (a finding's head: severity,
code, rule, version, path; a repeated change's places) is never broken, so a long path stays
whole and copyable."""

from __future__ import annotations

import io
import json
from itertools import groupby

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.text import Text

from upgrade_guard.findings import Finding, Outcome, Severity, Witness
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.json_report import tally
from upgrade_guard.report.terminal import PLAIN, Terminal

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _indented(text: str, style: str = "") -> Padding:
    return Padding(Text(text, style=style), (0, 0, 0, 10), expand=False)


_UNPROVEN = "unproven: no witness could be built for it; it stays an error"


def _witness_lines(witness: Witness) -> list[RenderableType]:
    """What the apiserver does, then the objects, one line each, never broken (copyable)."""
    after = " once the new CRD is applied" if witness.stored_under == "new" else ""
    at = f"at {witness.version}"
    if witness.read_version:
        at = f"at {witness.read_version} (stored at {witness.version}{after})"
    elif witness.operation in ("apply-crd", "apply-old-crd"):  # a CRD apply has no version
        at = f"(stored at {witness.version})"
    elif after:
        at = f"at {witness.version} (stored{after})"
    lines: list[RenderableType] = [
        Text(
            f"{' ' * 10}witness: {witness.operation} {at}: the apiserver"
            f" {witness.apiserver}: {witness.message}",
            style="magenta",
        )
    ]
    applies = [
        (f"applied by {entry.get('manager')}", entry.get("object"))
        for entry in witness.applied or ()
    ]
    for label, body in (
        *applies,
        ("stored", witness.stored),
        ("object", witness.object),
        ("read back", witness.read_back),
    ):
        if body is not None:
            text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
            lines.append(Text(f"{' ' * 12}{label}: {text}", style="dim"))
    return lines


def _proof_lines(finding: Finding, terminal: Terminal) -> list[RenderableType]:
    if finding.proven is False:
        return [_indented(_UNPROVEN, style="red")]
    if terminal.witnesses and finding.witness is not None:
        return _witness_lines(finding.witness)
    return []


def _finding_lines(finding: Finding, terminal: Terminal = PLAIN) -> list[RenderableType]:
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
    return lines + _proof_lines(finding, terminal)


def _group_lines(group: Group, terminal: Terminal = PLAIN) -> list[RenderableType]:
    first = group.first
    label = "excused" if first.excused else str(first.severity)
    style = "green" if first.excused else _STYLES[first.severity]
    crds = len(group.crds)
    head = Text("  ")
    head.append(f"{label:<7}", style=style)
    head.append(f" {first.code} {first.rule}", style="bold")
    head.append(f"  {group.count} times in {crds} CRD{'' if crds == 1 else 's'}")
    lines: list[RenderableType] = [head, _indented(first.message)]
    if first.excused:
        lines.append(_indented(f"excused: {first.excused}", style="green"))
    lines.extend(_indented(f"note: {note}", style="dim") for note in group.notes())
    places = group.places()
    more = group.count - len(places)
    lines += [
        Text(f"{' ' * 10}{'at' if index == 0 else '  '} {place}", style="dim")
        for index, place in enumerate(places)
    ]
    if more:
        lines.append(_indented(f"   and {more} more", style="dim"))
    unproven = sum(finding.proven is False for finding in group.findings)
    if unproven:
        lines.append(_indented(f"unproven at {unproven} of these places", style="red"))
    if terminal.witnesses and first.witness is not None:
        lines.append(_indented(f"at {grouping.place(first)}:", style="dim"))
        lines.extend(_witness_lines(first.witness))
    return lines


def _print(console: Console, line: RenderableType) -> None:
    """Prose (indented) wraps at the width; a line naming a place (code, rule, version,
    path) stays one copyable line, however long."""
    if isinstance(line, Text):
        console.print(line, no_wrap=True, crop=False, overflow="ignore")
    else:
        console.print(line)


def render(outcome: Outcome, terminal: Terminal = PLAIN) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=terminal.width,
        force_terminal=terminal.color,
        no_color=not terminal.color,
        highlight=False,
        soft_wrap=False,
    )
    if outcome.facts:
        from rich.table import Table  # (the facts of some commands only; it imports fractions)

        facts = Table.grid()
        facts.add_column(width=11, no_wrap=True)
        facts.add_column()
        for label, fact in outcome.facts:
            facts.add_row(f"{label}:", fact)
        console.print(facts)
        console.print()
    groups, singles = grouping.grouped(outcome.findings)
    if groups:
        console.print(Text("Repeated changes", style="bold underline"))
        for group in groups:
            for line in _group_lines(group, terminal):
                _print(console, line)
        console.print()
    for crd, findings in groupby(singles, key=lambda f: f.crd):
        console.print(Text(crd or grouping.ALL_CRDS, style="bold underline"))
        for finding in findings:
            for line in _finding_lines(finding, terminal):
                _print(console, line)
        console.print()
    console.print(Text(f"policy: {outcome.policy}", style="dim"))
    counts = tally(outcome)
    verdict = Text(
        "SAFE" if outcome.safe else "UNSAFE", style="bold green" if outcome.safe else "bold red"
    )
    line = Text("upgrade-guard ")
    line.append(verdict)
    compared = outcome.crds_compared
    line.append(f" — {compared} CRD{'' if compared == 1 else 's'}; {counts}")
    console.print(line)
    return "\n".join(row.rstrip() for row in buffer.getvalue().split("\n"))
