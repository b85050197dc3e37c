"""GitHub Actions workflow commands: one annotation per finding, then a summary line."""

from __future__ import annotations

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report.json_report import summary

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(finding: Finding) -> str:
    command = "notice" if finding.excused else _COMMANDS[finding.severity]
    where = " ".join(part for part in (finding.crd, finding.version, finding.path) if part)
    message = finding.message + (f" (excused: {finding.excused})" if finding.excused else "")
    title = f"{finding.code} {finding.rule}"
    place = ""
    if finding.location is not None:
        file, line = finding.location
        place = f"file={_property(file)},line={line},"
    return f"::{command} {place}title={_property(title)}::{_escape(f'{where}: {message}')}"


def render(outcome: Outcome) -> str:
    lines = [_annotation(finding) for finding in outcome.findings]
    lines += [f"{label}: {fact}" for label, fact in outcome.facts]
    counts = ", ".join(f"{n} {kind}" for kind, n in summary(outcome).items())
    lines.append(f"upgrade-guard: {outcome.verdict} ({counts}; policy: {outcome.policy})")
    return "\n".join(lines) + "\n"
