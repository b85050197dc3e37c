"""UG211 pattern-changed

What it flags: a pattern added to a string field, or changed in any way. Whether one regular
expression accepts everything another does cannot be decided in general, so every change
counts.

Why it matters: stored strings that do not match the new pattern can no longer be created as
they are, and fail every update before Kubernetes 1.30 (ratcheted from 1.30).

Allowed: the pattern removed.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = old.get("pattern"), new.get("pattern")
    if after is not None and before != after:
        verb = "added" if before is None else "changed"
        yield Change((), f"pattern {verb}: {after}", before, after, ratchetable=True)


RULE = PropertyRule(
    code="UG211",
    name="pattern-changed",
    severity=Severity.ERROR,
    summary="A pattern was added or changed.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"pattern"}),
    harm=Harm.REFUSED_ON_WRITE,
)
