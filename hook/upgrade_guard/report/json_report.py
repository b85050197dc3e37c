"""The machine-readable report: one shape for every command, its JSON Schema in
report_schema.py (``upgrade-guard schema report``), described in docs/reports.md.

``groups`` are the changes found at least twice (report/grouping.py), each once with its
count, its CRDs and its first places ("crd version path"); every finding stays in
``findings``. ``history`` is what verify-history compared, null for the other commands.
Every key is always present; version and path are null for CRD-level findings, reason is
null unless the finding is excused. ``proven`` and ``witness``: /work/team/WITNESS.md's
contract, described in docs/reports.md.
"""

from __future__ import annotations

import json
from typing import Any

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group
from upgrade_guard.report.report_schema import SCHEMA_VERSION
from upgrade_guard.report.terminal import PLAIN, Terminal


def finding_as_dict(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "rule": finding.rule,
        "severity": str(finding.severity),
        "crd": finding.crd,
        "version": finding.version,
        "path": finding.path,
        "message": finding.message,
        "excused": finding.excused is not None,
        "reason": finding.excused,
        "notes": list(finding.notes),
        "old": finding.old,
        "new": finding.new,
        "proven": finding.proven,
        "witness": None if finding.witness is None else finding.witness.as_dict(),
    }


def summary(outcome: Outcome) -> dict[str, int]:
    counts = {str(severity): 0 for severity in sorted(Severity, reverse=True)}
    counts["excused"] = 0
    counts["unproven"] = 0
    for finding in outcome.findings:
        if finding.excused is None:
            counts[str(finding.severity)] += 1
        else:
            counts["excused"] += 1
        if finding.proven is False:
            counts["unproven"] += 1
    return counts


def tally(outcome: Outcome) -> str:
    """The summary as the reports for people say it: unproven only where some are."""
    return ", ".join(
        f"{n} {kind}" for kind, n in summary(outcome).items() if n or kind != "unproven"
    )


def group_as_dict(group: Group) -> dict[str, Any]:
    first = group.first
    return {
        "code": first.code,
        "rule": first.rule,
        "severity": str(first.severity),
        "message": first.message,
        "excused": first.excused is not None,
        "reason": first.excused,
        "old": first.old,
        "new": first.new,
        "count": group.count,
        "crds": group.crds,
        "places": group.places(),
    }


def render(outcome: Outcome, terminal: Terminal = PLAIN) -> str:
    document = {
        "schemaVersion": SCHEMA_VERSION,
        "verdict": outcome.verdict,
        "policy": outcome.policy,
        "summary": summary(outcome),
        "history": dict(outcome.details) or None,
        "findings": [finding_as_dict(finding) for finding in outcome.findings],
        "groups": [group_as_dict(group) for group in grouping.grouped(outcome.findings)[0]],
    }
    return json.dumps(document, indent=2, default=str) + "\n"
