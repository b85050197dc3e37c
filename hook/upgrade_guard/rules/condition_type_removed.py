"""UG722 condition-type-removed

What it flags: a condition type in a CRD's vocabulary on the baseline that the candidate's
vocabulary lacks, without a `condition-breaks` entry for it. The vocabulary is the policy's
`controllers[].conditions`, else the enum on `status.conditions[].type` of the storage
version's schema; a CRD with neither is not checked, and one whose policy stops declaring
its conditions drops every type it declared.

Why it matters: dashboards, alerts and `kubectl wait --for=condition=TYPE` key on condition
types. A type the controller stops setting leaves them waiting on a condition that never
comes, and objects stored before keep the old one.

Allowed: types added, or a type removed with a `condition-breaks` entry
(`{type: Degraded, reason: ...}`); the hook then warns while stored objects still carry it
(UG612).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject, vocabulary


def check(subject: HistorySubject) -> Iterator[tuple[str, Change]]:
    for name, before, after in subject.controllers():
        old = vocabulary(before, subject.baseline.crds.get(name))
        new = vocabulary(after, subject.candidate.crds.get(name))
        if old is None or (new is None and (before is None or before.conditions is None)):
            continue
        for condition_type in sorted(set(old) - set(new or {})):
            if after is not None and after.breaks(condition_type) is not None:
                continue
            message = (
                f"condition type {condition_type} is no longer declared and no condition-breaks"
                " entry says why"
            )
            yield name, Change(None, message, old=condition_type, new=None)


RULE = HistoryCheck(
    code="UG722",
    name="condition-type-removed",
    severity=Severity.ERROR,
    summary="A condition type is dropped from a CRD's vocabulary without a declared break.",
    doc=__doc__ or "",
    check=check,
)
