"""UG709 counter-decreased

What it flags: a `monotonic` counter (controller-state-version by default) below its
baseline value.

Why it matters: controller-state-version counts the formats of the state a controller
writes. A release with a lower number claims to read only older state, while clusters may
already hold state the higher number wrote.

Allowed: the counter kept or raised.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    for counter, before, after in subject.stamped_counters():
        if counter.rule == "monotonic" and after < before:
            message = f"{counter.name} went down from {before} to {after}; it is monotonic"
            yield None, Change(None, message, before, after)


RULE = HistoryCheck(
    code="UG709",
    name="counter-decreased",
    severity=Severity.ERROR,
    summary="A monotonic counter went down.",
    doc=__doc__ or "",
    check=check,
)
