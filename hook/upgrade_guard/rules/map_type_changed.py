"""UG215 map-type-changed

What it flags: x-kubernetes-map-type changed (absent means granular).

Why it matters: server-side apply merges a granular map key by key and replaces an atomic map
whole, so field ownership recorded in stored objects' managedFields no longer matches, and the
next apply by a controller or GitOps tool can take over or drop keys others set.

Allowed: map-type granular written out where it was absent (the same thing).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before = old.get("x-kubernetes-map-type") or "granular"
    after = new.get("x-kubernetes-map-type") or "granular"
    if before != after:
        yield Change((), f"map type changed: {before} -> {after}", before, after)


RULE = PropertyRule(
    code="UG215",
    name="map-type-changed",
    severity=Severity.ERROR,
    summary="A map type changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-map-type"}),
    harm=Harm.NONE,
)
