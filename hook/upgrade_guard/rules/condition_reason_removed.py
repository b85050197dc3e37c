"""UG723 condition-reason-removed

What it flags: a reason the baseline's policy declares for a condition type the candidate
keeps, which the candidate no longer declares for it, without a `condition-breaks` entry
naming it (`{type: Ready, condition-reasons: [Timeout], reason: ...}`). A type whose reasons
the candidate stops declaring drops every reason it had.

Why it matters: automation reads a condition's reason as well as its status ("Ready=False
because QuotaExceeded"); a reason that is no longer set is a contract removed, as a type is.

Allowed: reasons added, reasons declared where none were, or a reason removed with a
`condition-breaks` entry for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject, vocabulary


def check(subject: HistorySubject) -> Iterator[tuple[str, Change]]:
    for name, before, after in subject.controllers():
        old = vocabulary(before, subject.baseline.crds.get(name)) or {}
        new = vocabulary(after, subject.candidate.crds.get(name)) or {}
        for condition_type in sorted(old.keys() & new.keys()):
            kept = set(new[condition_type] or ())
            for reason in old[condition_type] or ():
                if reason in kept or (after and after.breaks(condition_type, reason)):
                    continue
                message = (
                    f"condition type {condition_type} no longer declares reason {reason} and no"
                    " condition-breaks entry says why"
                )
                yield name, Change(None, message, old=f"{condition_type}/{reason}", new=None)


RULE = HistoryCheck(
    code="UG723",
    name="condition-reason-removed",
    severity=Severity.ERROR,
    summary="A reason is dropped from a condition type without a declared break.",
    doc=__doc__ or "",
    check=check,
)
