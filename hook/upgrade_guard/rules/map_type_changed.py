"""UG215 map-type-changed

What it flags: x-kubernetes-map-type changed (absent means granular).

Why it matters: server-side apply merges a granular map key by key and replaces an atomic map
whole, so field ownership recorded in stored objects' managedFields no longer matches, and the
next apply by a controller or GitOps tool can take over or drop keys others set. As measured
on kube-apiserver v1.35 (tests/cluster/test_map_type_truth.py): from granular to atomic, a
manager's apply of its own unchanged map conflicts with the manager that set another key, or,
forced, drops that key; from atomic to granular, a manager that applied the whole map and
then leaves a key out keeps it. A CREATE, UPDATE or GET is the same under either.

Allowed: map-type granular written out where it was absent (the same thing). An info, not
an error, below a list or map that server-side apply owns whole on both sides (a list with
no list type, or list type atomic; a map with map type atomic): it never merges inside it,
whatever the map type there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before = old.get("x-kubernetes-map-type") or "granular"
    after = new.get("x-kubernetes-map-type") or "granular"
    if before != after:
        yield Change((), f"map type changed: {before} -> {after}", before, after)


def placed(change: Change, old: schema.Node, new: schema.Node, path: schema.Path) -> Change:
    """The change at ``path`` of the roots ``old`` and ``new``: an info where an enclosing
    list or map is owned whole on both sides."""
    above = owned_whole_above(old, new, path)
    if above is None:
        return change
    whole = schema.render_path(above) if above else "the object"
    note = (
        f"server-side apply owns {whole} whole on both sides and never merges inside it:"
        " the map type there changes nothing"
    )
    return replace(change, severity=Severity.INFO, notes=(*change.notes, note))


def owned_whole_above(old: schema.Node, new: schema.Node, path: schema.Path) -> schema.Path | None:
    """The nearest list or map enclosing ``path`` that both roots make atomic, if any."""
    found = None
    old_node: schema.Node | None = old
    new_node: schema.Node | None = new
    for depth, part in enumerate(path):
        if old_node is None or new_node is None:
            break
        if _atomic(old_node) and _atomic(new_node):
            found = path[:depth]
        old_node = schema.children(old_node).get(part)
        new_node = schema.children(new_node).get(part)
    return found


def _atomic(node: schema.Node) -> bool:
    if node.get("type") == "array" or "items" in node:
        return (node.get("x-kubernetes-list-type") or "atomic") == "atomic"
    return node.get("x-kubernetes-map-type") == "atomic"


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
