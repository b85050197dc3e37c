"""UG806 removed-while-served

What it flags: a version removed from ``spec.versions`` (or with its whole CRD) in the
release right after one that still served it, instead of first being set
``served: false`` for a release.

Why it matters: ``served: false`` is the reversible step: the version disappears from the
API, a rollback brings it back, and objects stored at it still decode. Removing the entry
is not reversible once applied, and needs the storage migration UG807 checks. Graduation
order: not served first, removed later.

Allowed: removing a version a release after it stopped being served.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.rules.base import LifecycleRule
from upgrade_guard.lifecycle.timeline import History, Violation


def check(history: History) -> Iterator[Violation]:
    for index, crd, version in history.transitions():
        if history.entry(index, crd, version) is not None:
            continue
        if not history.served(index - 1, crd, version):
            continue
        before, after = history.releases[index - 1], history.releases[index]
        whole = " with its whole CRD" if crd not in after.crds else ""
        yield Violation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} removed{whole} in {after} while {before} still served it;"
                " set served: false for a release first"
            ),
            old=before.as_data(),
            new=after.as_data(),
        )


RULE = LifecycleRule(
    code="UG806",
    name="removed-while-served",
    severity=Severity.ERROR,
    summary="A version was removed in the release right after one that still served it.",
    doc=__doc__ or "",
    check=check,
)
