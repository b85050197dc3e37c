"""UG703 schema-digest-stale

What it flags: a CRD whose crd-schema-digest annotation is missing or differs from the
digest of its spec.

Why it matters: the digest records which spec the stamped version stands for. A stale digest
means the spec was edited after it was stamped, so the version may not have been raised for
that edit.

Allowed: a digest `upgrade-guard stamp` wrote. Formatting, comments, key order,
descriptions, titles and examples do not change it.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str, Change]]:
    if subject.regenerated:
        return
    key = subject.digest_key
    for name, crd in sorted(subject.candidate.crds.items()):
        carried, spec = crd.annotations.get(key), subject.after_digests[name]
        if carried != spec:
            yield (
                name,
                Change(
                    None,
                    f"{key} is {carried or 'missing'}, but the spec's digest is {spec}"
                    f" (run `{subject.stamp} --bump`)",
                    carried,
                    spec,
                ),
            )


RULE = HistoryCheck(
    code="UG703",
    name="schema-digest-stale",
    severity=Severity.ERROR,
    summary="A CRD's crd-schema-digest is not the digest of its spec.",
    doc=__doc__ or "",
    check=check,
)
