"""UG204 type-changed

What it flags: a value location whose type is declared or changed, other than integer to
number (every integer is a number), integer or string to x-kubernetes-int-or-string, and a
type dropped (any type accepted). A field declared for the first time below
x-kubernetes-preserve-unknown-fields (or an additionalProperties) had a type before: any
value, or the additionalProperties' type, as stored objects can hold it there.

Why it matters: stored values of the old type no longer validate, so a CREATE with them fails
(updates that leave the value unchanged pass from Kubernetes 1.30), and a controller or client
decoding the field as the new type fails on every object stored with the old one. That second
harm is why this stays an error whatever the cluster version.

Allowed: integer widened to number, or to int-or-string; the type removed where the schema
allows it.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location, Node

_INT_OR_STRING = "int-or-string"
_WIDENINGS = frozenset(
    {("integer", "number"), ("integer", _INT_OR_STRING), ("string", _INT_OR_STRING)}
)


def _type(node: Node) -> str | None:
    if node.get("x-kubernetes-int-or-string") is True:
        return _INT_OR_STRING
    type_ = node.get("type")
    return None if type_ is None else str(type_)


def compare(at: Location) -> Iterator[Change]:
    before, after = _type(at.old), _type(at.new)
    if before == after or after is None or (before, after) in _WIDENINGS:
        return
    if before == _INT_OR_STRING:
        return  # int-or-string-removed explains this change
    yield Change((), f"type changed from {before or 'any'} to {after}", before, after)


RULE = PropertyRule(
    code="UG204",
    name="type-changed",
    severity=Severity.ERROR,
    summary="A field's type changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"type", "x-kubernetes-int-or-string"}),
    harm=Harm.REFUSED_ON_WRITE,
    covers_subtree=True,
)
