"""UG705 schema-bumped-without-change

What it flags: a schema version above the baseline's while no normalized spec changed and no
CRD was added or removed.

Why it matters: a version names a schema change. A bump without one makes declared breaks
and restart records written for that version refer to nothing, and hides which release
really changed the schema.

Allowed: the baseline's version kept until the schema changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    before, after = subject.before, subject.after
    if before is not None and after is not None and after > before and not subject.changes:
        yield (
            None,
            Change(
                None,
                f"the schema version moved from {before} to {after} but no normalized spec"
                f" changed; keep it at {before}: run `{subject.stamp} --schema-version {before}`",
                before,
                after,
            ),
        )


RULE = HistoryCheck(
    code="UG705",
    name="schema-bumped-without-change",
    severity=Severity.ERROR,
    summary="The schema version moved but the schema did not.",
    doc=__doc__ or "",
    check=check,
)
