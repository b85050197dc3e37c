"""Run every lifecycle rule over a release history: one Outcome, findings in release order."""

from __future__ import annotations

from collections.abc import Sequence

from upgrade_guard.findings import Finding, Outcome
from upgrade_guard.lifecycle.rules import ALL_RULES
from upgrade_guard.lifecycle.timeline import History, Release
from upgrade_guard.policy import Policy


def verify_lifecycle(releases: Sequence[Release], policy: Policy) -> Outcome:
    """Judge the releases, oldest first, by the policy's lifecycle section."""
    history = History(tuple(releases), policy)
    ordered: list[tuple[tuple[str, int, str, str], Finding]] = []
    for rule in ALL_RULES:
        for violation in rule.check(history):
            finding = Finding(
                code=rule.code,
                rule=rule.name,
                severity=rule.severity,
                crd=violation.crd,
                version=violation.version,
                path=None,
                message=violation.message,
                old=violation.old,
                new=violation.new,
                excused=violation.excused,
                notes=(*violation.notes, history.timeline(violation.crd, violation.version)),
            )
            key = (violation.crd, violation.release, violation.version, rule.code)
            ordered.append((key, finding))
    ordered.sort(key=lambda pair: pair[0])
    return Outcome(
        findings=tuple(finding for _, finding in ordered),
        crds_compared=len(history.crd_names),
        policy=policy.source,
    )
