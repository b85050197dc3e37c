"""Reports of ``verify-history``: the engine's formats plus the baseline and the counters.

Every format starts from the same facts: which baseline and why (the source), both schema
versions, whether the schema changed, the counters, and every finding. The last line of
text, markdown and github output is the verdict: on success it states baseline, source,
both versions and whether the schema changed; on failure it counts the reasons, each listed
above it.

JSON shape (every key always present):

    {"verdict": "safe" | "unsafe",
     "baseline": str, "candidate": str, "source": str, "policy": str,
     "schema": {"baseline_version": int | null, "candidate_version": int | null,
                "changed": bool, "changes": [str], "first_adoption": bool,
                "restart": str | null},
     "counters": [{"name", "rule", "baseline", "candidate", "files_changed"}],
     "notes": [str],
     "summary": {...}, "findings": [...]}   # as in the diff report
"""

from __future__ import annotations

import json
from collections.abc import Callable

from upgrade_guard.counters.history import History
from upgrade_guard.findings import Finding
from upgrade_guard.report import github
from upgrade_guard.report.json_report import finding_as_dict, summary


def _version(value: int | None) -> str:
    return "none" if value is None else str(value)


def headline(history: History) -> str:
    """The verdict line."""
    versions = (
        f"schema version {_version(history.baseline_version)}"
        f" → {_version(history.candidate_version)}"
    )
    changed = "schema changed" if history.schema_changed else "schema unchanged"
    where = f"baseline {history.baseline} ({history.source})"
    if history.safe:
        return f"upgrade-guard: history OK — {where}; {versions}, {changed}"
    count = len(history.reasons)
    return (
        f"upgrade-guard: history REFUSED — {count} reason{'s' if count != 1 else ''};"
        f" {where}; {versions}, {changed}"
    )


def _facts(history: History) -> list[str]:
    lines = [f"baseline:  {history.baseline} — {history.source}"]
    lines.append(f"candidate: {history.candidate}")
    lines.append(f"policy:    {history.outcome.policy}")
    schema = (
        f"schema:    version {_version(history.baseline_version)} →"
        f" {_version(history.candidate_version)}"
    )
    if history.first_adoption:
        schema += " (first adoption)"
    if history.schema_changed:
        schema += "; changed: " + "; ".join(history.changes)
    else:
        schema += "; unchanged"
    lines.append(schema)
    if history.restart is not None:
        lines.append(f"restart:   {history.restart.reason}")
    for counter in history.counters:
        files = ""
        if counter.files_changed is not None:
            files = "; files changed" if counter.files_changed else "; files unchanged"
        lines.append(
            f"counter:   {counter.name} ({counter.rule}) {_version(counter.before)} →"
            f" {_version(counter.after)}{files}"
        )
    lines.extend(f"note:      {note}" for note in history.notes)
    return lines


def _finding_lines(finding: Finding) -> list[str]:
    label = "excused" if finding.excused else str(finding.severity)
    where = " ".join(part for part in (finding.crd, finding.version, finding.path) if part)
    lines = [f"  {label:<7} {finding.code} {finding.rule}  {where}", f"          {finding.message}"]
    if finding.excused:
        lines.append(f"          excused: {finding.excused}")
    lines.extend(f"          note: {note}" for note in finding.notes)
    return lines


def render_text(history: History) -> str:
    lines = _facts(history)
    if history.outcome.findings:
        lines.append("")
    for finding in history.outcome.findings:
        lines.extend(_finding_lines(finding))
    lines.extend(["", headline(history)])
    return "\n".join(lines) + "\n"


def render_json(history: History) -> str:
    document = {
        "verdict": history.outcome.verdict,
        "baseline": history.baseline,
        "candidate": history.candidate,
        "source": history.source,
        "policy": history.outcome.policy,
        "schema": {
            "baseline_version": history.baseline_version,
            "candidate_version": history.candidate_version,
            "changed": history.schema_changed,
            "changes": list(history.changes),
            "first_adoption": history.first_adoption,
            "restart": history.restart.reason if history.restart else None,
        },
        "counters": [
            {
                "name": c.name,
                "rule": c.rule,
                "baseline": c.before,
                "candidate": c.after,
                "files_changed": c.files_changed,
            }
            for c in history.counters
        ],
        "notes": list(history.notes),
        "summary": summary(history.outcome),
        "findings": [finding_as_dict(f) for f in history.outcome.findings],
    }
    return json.dumps(document, indent=2, default=str) + "\n"


def render_markdown(history: History) -> str:
    lines = ["## upgrade-guard verify-history", ""]
    lines += [
        f"- {line.split(':', 1)[0]}: {line.split(':', 1)[1].strip()}" for line in _facts(history)
    ]
    findings = history.outcome.findings
    if findings:
        lines += ["", "| | code | rule | where | message |", "|---|---|---|---|---|"]
        for f in findings:
            label = "excused" if f.excused else str(f.severity)
            where = " ".join(p for p in (f.crd, f.version, f.path) if p)
            message = f.message + (f" (excused: {f.excused})" if f.excused else "")
            cells = [label, f.code, f.rule, where, message]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", f"**{headline(history).removeprefix('upgrade-guard: ')}**"]
    return "\n".join(lines) + "\n"


def render_github(history: History) -> str:
    annotations = github.render(history.outcome).splitlines()[:-1]
    command = "notice" if history.safe else "error"
    verdict = headline(history)
    escaped = verdict.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return "\n".join([*annotations, f"::{command} title=verify-history::{escaped}", verdict]) + "\n"


RENDERERS: dict[str, Callable[[History], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "github": render_github,
}
