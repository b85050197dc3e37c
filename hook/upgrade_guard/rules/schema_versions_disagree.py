"""UG702 schema-versions-disagree

What it flags: CRDs of the checked tree that carry different schema versions.

Why it matters: one schema version names the whole set of CRDs a chart ships. Different
values mean one CRD was stamped and another forgotten, so no single release of the schema
can be named; the version the other checks compare is then the highest.

Allowed: every CRD at the same version (`upgrade-guard stamp DIR` stamps them all).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject, stamped


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    disagreement = stamped(subject.candidate.crds, subject.version_key).disagreement(
        subject.version_key
    )
    if disagreement is not None and not subject.regenerated:
        yield None, disagreement


RULE = HistoryCheck(
    code="UG702",
    name="schema-versions-disagree",
    severity=Severity.ERROR,
    summary="The CRDs carry different schema versions.",
    doc=__doc__ or "",
    check=check,
)
