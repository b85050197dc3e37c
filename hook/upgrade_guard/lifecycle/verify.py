"""Run every lifecycle rule over a release history: one Outcome, findings in release order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from upgrade_guard import engine, rules
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.lifecycle.rules.base import LifecycleRule
from upgrade_guard.lifecycle.timeline import History, Release
from upgrade_guard.policy import Policy


def breaking_changes(
    releases: Sequence[Release], policy: Policy
) -> dict[tuple[int, str, str], list[Finding]]:
    """The engine's errors inside versions served by both a release and the one before, by
    (index, crd, version); policy severities apply, declared breaks do not."""
    judged = replace(policy, declared_breaks=(), storage_version_only=False)
    found: dict[tuple[int, str, str], list[Finding]] = {}
    for index in range(1, len(releases)):
        before, after = releases[index - 1].crds, releases[index].crds
        shared = sorted(before.keys() & after.keys())
        outcome = engine.compare_crds(
            {name: before[name] for name in shared},
            {name: after[name] for name in shared},
            judged,
            None,
        )
        for finding in outcome.findings:
            version = finding.version
            if (
                finding.severity is Severity.ERROR
                and version is not None
                and _served(before, finding.crd, version)
                and _served(after, finding.crd, version)
            ):
                found.setdefault((index, finding.crd, version), []).append(finding)
    return found


def _served(crds: Mapping[str, Crd], name: str, version: str) -> bool:
    return version in crds[name].served_versions if name in crds else False


def verify_lifecycle(releases: Sequence[Release], policy: Policy) -> Outcome:
    """Judge the releases, oldest first, by the policy's lifecycle section."""
    history = History(tuple(releases), policy.lifecycle, breaking_changes(releases, policy))
    ordered: list[tuple[tuple[str, int, str, str], Finding]] = []
    for rule in rules.ALL_RULES:
        if not isinstance(rule, LifecycleRule):
            continue
        severity, strict_notes = policy.judged(rule.code, rule.severity)
        if severity is None:
            continue
        for violation in rule.check(history):
            finding = Finding(
                code=rule.code,
                rule=rule.name,
                severity=severity,
                crd=violation.crd,
                version=violation.version,
                path=None,
                message=violation.message,
                old=violation.old,
                new=violation.new,
                excused=violation.excused,
                notes=(
                    *violation.notes,
                    history.timeline(violation.crd, violation.version),
                    *strict_notes,
                ),
            )
            key = (violation.crd, violation.release, violation.version, rule.code)
            ordered.append((key, finding))
    ordered.sort(key=lambda pair: pair[0])
    return Outcome(
        findings=tuple(finding for _, finding in ordered),
        crds_compared=len(history.crd_names),
        policy=policy.source,
    )
