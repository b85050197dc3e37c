"""UG710 counter-changed-without-bump

What it flags: an `equal-when-unchanged` counter whose files (the policy's `files` globs)
changed since the baseline while the counter did not rise above its baseline value.

Why it matters: the counter names a contract those files define, an admission webhook's for
instance. A changed contract under the same number lets a chart and an image that no longer
agree pass as a pair.

Allowed: the counter raised in the commit that changes its files.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    for counter, before, after in subject.stamped_counters():
        if subject.files_changed(counter) is True and after <= before:
            message = (
                f"the files of {counter.name} changed but it stayed at {after}"
                f" (must be above {before})"
            )
            yield None, Change(None, message, before, after)


RULE = HistoryCheck(
    code="UG710",
    name="counter-changed-without-bump",
    severity=Severity.ERROR,
    summary="A counter's files changed but it did not rise.",
    doc=__doc__ or "",
    check=check,
)
