"""UG707 first-adoption-not-one

What it flags: a baseline without schema versions (no CRDs, or none annotated) and a version
other than 1.

Why it matters: numbering from 1 makes every version traceable to the commit that adopted
it; a first version of 5 claims four releases of history that no baseline shows.

Allowed: schema version 1 on the first stamped commit.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    after = subject.after
    if after is not None and subject.before is None and after != 1:
        what = "has no CRDs" if not subject.baseline.crds else "carries no schema versions"
        yield (
            None,
            Change(
                None,
                f"the baseline {what}, so this is a first adoption: the schema version must be 1,"
                f" not {after}: run `{subject.stamp} --schema-version 1`",
                None,
                after,
            ),
        )


RULE = HistoryCheck(
    code="UG707",
    name="first-adoption-not-one",
    severity=Severity.ERROR,
    summary="A first adoption must start at schema version 1.",
    doc=__doc__ or "",
    check=check,
)
