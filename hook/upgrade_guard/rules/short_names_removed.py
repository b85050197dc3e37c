"""UG107 short-names-removed

What it flags: a shortName the old CRD had that the new one lacks.

Why it matters: scripts and people using `kubectl get <shortName>` break. Nothing stored is
affected, so it is a warning.

Allowed: short names added.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    kept = set(new.names.get("shortNames") or [])
    removed = [name for name in old.names.get("shortNames") or [] if name not in kept]
    if removed:
        yield Change(None, f"short names removed: {', '.join(removed)}", old=removed)


RULE = CrdRule(
    code="UG107",
    name="short-names-removed",
    severity=Severity.WARNING,
    summary="Short names were removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"names"}),
)
