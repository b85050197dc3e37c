"""UG706 schema-version-rolled-back

What it flags: a schema version below the baseline's, unless the policy's `restarts` has an
entry for the baseline version that lists the digest of every baseline CRD.

Why it matters: a lower version reuses numbers that already named another schema. Clusters
that installed the higher one hold objects written with it, and the cluster hook refuses a
chart whose version is below the live CRDs'.

Allowed: a rollback declared under `restarts` (schema-version: the abandoned baseline
version, digests: every baseline CRD's, reason); the engine's findings of that rollback are
then excused by it.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    restart, problem = subject.restart
    if subject.rolled_back() and restart is None:
        yield (
            None,
            Change(
                None,
                f"the schema version went down from {subject.before} to {subject.after}:"
                f" a rollback, and {problem}",
                subject.before,
                subject.after,
            ),
        )


RULE = HistoryCheck(
    code="UG706",
    name="schema-version-rolled-back",
    severity=Severity.ERROR,
    summary="The schema version went down without a restart.",
    doc=__doc__ or "",
    check=check,
)
