"""UG214 list-type-changed

What it flags: x-kubernetes-list-type changed (absent means atomic), or the
x-kubernetes-list-map-keys of a map list changed.

Why it matters: a set rejects stored lists with duplicates, a map list rejects items without
their keys or with repeated keys, and server-side apply changes how it merges and who owns
each item. The apiserver never ratchets a list type or map key change, so every update of an
affected object fails.

Allowed: list-type atomic written out where it was absent (the same thing).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule
from upgrade_guard.schema import Node


def compare(old: Node, new: Node) -> Iterator[Change]:
    before = old.get("x-kubernetes-list-type") or "atomic"
    after = new.get("x-kubernetes-list-type") or "atomic"
    if before != after:
        yield Change((), f"list type changed: {before} -> {after}", before, after)
        return
    old_keys, new_keys = (
        old.get("x-kubernetes-list-map-keys"),
        new.get("x-kubernetes-list-map-keys"),
    )
    if after == "map" and old_keys != new_keys:
        yield Change((), f"list map keys changed: {old_keys} -> {new_keys}", old_keys, new_keys)


RULE = Rule(
    code="UG214",
    name="list-type-changed",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="A list type or its map keys changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-list-type", "x-kubernetes-list-map-keys"}),
)
