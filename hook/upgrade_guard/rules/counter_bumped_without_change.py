"""UG711 counter-bumped-without-change

What it flags: an `equal-when-unchanged` counter whose value moved while its files did not
change.

Why it matters: a new number with the same contract splits chart and image pairs that still
agree, and hides which commit really changed the contract.

Allowed: the counter kept equal until its files change.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    for counter, before, after in subject.stamped_counters():
        if subject.files_changed(counter) is False and after != before:
            message = f"{counter.name} moved from {before} to {after} but its files did not change"
            yield None, Change(None, message, before, after)


RULE = HistoryCheck(
    code="UG711",
    name="counter-bumped-without-change",
    severity=Severity.ERROR,
    summary="A counter moved but its files did not change.",
    doc=__doc__ or "",
    check=check,
)
