"""UG701 schema-version-missing

What it flags: a CRD in the checked tree without a canonical crd-schema-version annotation:
a positive decimal string such as "1" (no sign, no leading zero, no spaces).

Why it matters: the schema version is how verify-history, diff and the cluster hook tell
which release of the schema a CRD is; without it a missed bump or a rollback cannot be seen,
so verify-history refuses instead of guessing.

Allowed: any canonical value; `upgrade-guard stamp DIR --schema-version N` writes it on
every CRD.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject, stamped


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    keys, bump = (subject.version_key, subject.digest_key), f"{subject.stamp} --bump"
    if subject.regenerated:
        count = len(subject.candidate.crds)
        yield (
            None,
            Change(
                None,
                f"none of the {count} CRD{'s' if count != 1 else ''} carries {keys[0]} or {keys[1]}"
                f" (regenerated and not stamped?): run `{bump}`",
            ),
        )
        return
    found = stamped(subject.candidate.crds, subject.version_key)
    yield from found.missing_changes(subject.version_key, f"run `{bump}`")


RULE = HistoryCheck(
    code="UG701",
    name="schema-version-missing",
    severity=Severity.ERROR,
    summary="A CRD lacks a canonical crd-schema-version.",
    doc=__doc__ or "",
    check=check,
)
