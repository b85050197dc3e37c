"""The machine-readable report. Its shape is stable and documented in docs/reports.md:

    {"verdict": "safe" | "unsafe",
     "policy": str,   # the policy file used, or "none (built-in defaults)"
     ...              # verify-history adds "baseline", "candidate", "source", "schema",
                      # "counters" and "notes" (docs/counters.md)
     "summary": {"error": int, "warning": int, "info": int, "excused": int},
     "findings": [{"code", "rule", "severity", "crd", "version", "path", "message",
                   "excused", "reason", "notes", "old", "new"}, ...],
     "groups": [{"code", "rule", "severity", "message", "excused", "reason", "old", "new",
                 "count", "crds", "places"}, ...]}

``groups`` are the changes found at least twice (report/grouping.py), each once with its
count, its CRDs and its first places ("crd version path"); every finding stays in
``findings``.

Every key is always present; version and path are null for CRD-level findings, reason is
null unless the finding is excused.
"""

from __future__ import annotations

import json
from typing import Any

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import grouping
from upgrade_guard.report.grouping import Group


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
    }


def summary(outcome: Outcome) -> dict[str, int]:
    counts = {str(severity): 0 for severity in sorted(Severity, reverse=True)}
    counts["excused"] = 0
    for finding in outcome.findings:
        if finding.excused is None:
            counts[str(finding.severity)] += 1
        else:
            counts["excused"] += 1
    return counts


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


def render(outcome: Outcome) -> str:
    document = {
        "verdict": outcome.verdict,
        "policy": outcome.policy,
        **outcome.details,
        "summary": summary(outcome),
        "findings": [finding_as_dict(finding) for finding in outcome.findings],
        "groups": [group_as_dict(group) for group in grouping.grouped(outcome.findings)[0]],
    }
    return json.dumps(document, indent=2, default=str) + "\n"
