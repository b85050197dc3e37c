"""UG214 list-type-changed

What it flags: x-kubernetes-list-type changed (absent means atomic), or the
x-kubernetes-list-map-keys of a map list changed.

Why it matters: a set rejects lists with duplicates and a map list items with repeated keys,
so stored lists like that can no longer be created as they are (the apiserver checks them on
update only where the old object had no such duplicate, and ratchets unchanged values from
1.30); and server-side apply changes how it merges the list and who owns each item.

Allowed: list-type atomic written out where it was absent (the same thing).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before = old.get("x-kubernetes-list-type") or "atomic"
    after = new.get("x-kubernetes-list-type") or "atomic"
    if before != after:
        yield Change((), f"list type changed: {before} -> {after}", before, after, ratchetable=True)
        return
    old_keys, new_keys = (
        old.get("x-kubernetes-list-map-keys"),
        new.get("x-kubernetes-list-map-keys"),
    )
    if after == "map" and old_keys != new_keys:
        yield Change(
            (),
            f"list map keys changed: {old_keys} -> {new_keys}",
            old_keys,
            new_keys,
            ratchetable=True,
        )


RULE = PropertyRule(
    code="UG214",
    name="list-type-changed",
    severity=Severity.ERROR,
    summary="A list type or its map keys changed.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-list-type", "x-kubernetes-list-map-keys"}),
    harm=Harm.REFUSED_ON_WRITE,
)
