"""UG606 first-adoption

What it flags: live CRDs that carry no `crd-schema-version` annotation (installed before the
chart adopted the counters, or by hand).

Why it matters: nothing is refused: the engine still compares them field by field; only the
counter checks have nothing to compare with.

Allowed: everything; the next release finds the annotations this one applies. Reported once:
not when the release being replaced ran the guard already (its Helm release record holds
the guard's Job).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck, listed
from upgrade_guard.subjects import HookSubject, stamped_number


def check(subject: HookSubject) -> Iterator[tuple[str | None, Change]]:
    key = subject.schema_key
    unversioned = [
        name
        for name, _, theirs in subject.both
        if stamped_number(theirs, key) is None and key not in theirs.annotations
    ]
    if unversioned and not subject.adopted:
        yield (
            None,
            Change(
                None,
                f"{len(unversioned)} live CRD(s) carry no {key} ({listed(unversioned)}):"
                " compared by schema only, adopted by this release",
            ),
        )


RULE = HookCheck(
    code="UG606",
    name="first-adoption",
    severity=Severity.INFO,
    summary="Live CRDs without a schema version are compared by schema only and adopted now.",
    doc=__doc__ or "",
    check=check,
)
