"""GitHub Actions workflow commands: one annotation per repeated change (GitHub keeps only
the first 10 error annotations of a step) and per other finding, then a summary line."""

from __future__ import annotations

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.json_report import tally
from upgrade_guard.report.terminal import PLAIN, Terminal

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


def _command(finding: Finding, title: str, text: str) -> str:
    """One annotation, placed at the finding's line of the new CRD file when known."""
    command = "notice" if finding.excused else _COMMANDS[finding.severity]
    place = ""
    if finding.location is not None:
        file, line = finding.location
        place = f"file={_property(file)},line={line},"
    message = text + (f" (excused: {finding.excused})" if finding.excused else "")
    return f"::{command} {place}title={_property(title)}::{_escape(message)}"


def _annotation(finding: Finding) -> str:
    where = grouping.place(finding)
    return _command(finding, f"{finding.code} {finding.rule}", f"{where}: {finding.message}")


def _group_annotation(group: Group) -> str:
    """A repeated change, placed at its first place."""
    first, crds = group.first, len(group.crds)
    where = f"{group.count} times in {crds} CRD{'' if crds == 1 else 's'}"
    return _command(
        first,
        f"{first.code} {first.rule} ({group.count} times)",
        f"{where}: {first.message}; at {group.places_line()}",
    )


def render(outcome: Outcome, terminal: Terminal = PLAIN) -> str:
    groups, singles = grouping.grouped(outcome.findings)
    lines = [_group_annotation(group) for group in groups]
    lines += [_annotation(finding) for finding in singles]
    lines += [f"{label}: {fact}" for label, fact in outcome.facts]
    counts = tally(outcome)
    lines.append(f"upgrade-guard: {outcome.verdict} ({counts}; policy: {outcome.policy})")
    return "\n".join(lines) + "\n"
