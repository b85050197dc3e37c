"""UG704 schema-changed-without-bump

What it flags: a normalized spec changed since the baseline, or a CRD was added or removed,
while the schema version stayed the same.

Why it matters: two different schemas would carry one version. Declared breaks, restart
records and the cluster hook rely on a version naming exactly one schema: the hook would
take the new schema for the one already live.

Allowed: the version raised by one with the change (`upgrade-guard stamp DIR
--schema-version N+1`); documentation-only edits need no bump.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    before, after = subject.before, subject.after
    if before is not None and after == before and subject.changes:
        yield (
            None,
            Change(
                None,
                f"the schema changed ({'; '.join(subject.changes)}) but the schema version"
                f" stayed at {after}; raise it to {before + 1}:"
                f" run `{subject.stamp} --schema-version {before + 1}`",
                before,
                after,
            ),
        )


RULE = HistoryCheck(
    code="UG704",
    name="schema-changed-without-bump",
    severity=Severity.ERROR,
    summary="The schema changed but its version did not rise.",
    doc=__doc__ or "",
    check=check,
)
