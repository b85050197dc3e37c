"""UG208 bound-tightened

What it flags: a numeric bound (minimum, maximum, with exclusiveMinimum/exclusiveMaximum), a
length bound (minLength, maxLength), an item count (minItems, maxItems) or a property count
(minProperties, maxProperties) that is newly present or stricter than before. One finding per
bound.

Why it matters: stored values outside the new bound can no longer be created as they are, and
without validation ratcheting (before Kubernetes 1.30) every update of such an object fails.
The apiserver ratchets this check from 1.30: unchanged values survive updates.

Allowed: a bound loosened or removed; minimum unchanged while exclusiveMinimum is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location, Node

_LOWER_COUNTS = ("minLength", "minItems", "minProperties")
_UPPER_COUNTS = ("maxLength", "maxItems", "maxProperties")


def _numeric(node: Node, bound: str, exclusive: str) -> tuple[float, bool] | None:
    value = node.get(bound)
    return None if value is None else (value, node.get(exclusive) is True)


def _describe(bound: tuple[float, bool] | None, symbol: str) -> str:
    if bound is None:
        return "none"
    value, exclusive = bound
    return f"{symbol}{'' if exclusive else '='} {value}"


def _numeric_changes(old: Node, new: Node) -> Iterator[Change]:
    for bound, exclusive, symbol, sign in (
        ("minimum", "exclusiveMinimum", ">", 1),
        ("maximum", "exclusiveMaximum", "<", -1),
    ):
        before, after = _numeric(old, bound, exclusive), _numeric(new, bound, exclusive)
        if after is None:
            continue
        tighter = before is None or (
            sign * (after[0] - before[0]) > 0 or (after[0] == before[0] and after[1] > before[1])
        )
        if tighter:
            yield Change(
                (),
                f"{bound} tightened: {_describe(before, symbol)} -> {_describe(after, symbol)}",
                None if before is None else before[0],
                after[0],
                ratchetable=True,
            )


def _count_changes(old: Node, new: Node) -> Iterator[Change]:
    for keyword in _LOWER_COUNTS + _UPPER_COUNTS:
        before, after = old.get(keyword), new.get(keyword)
        if after is None:
            continue
        lower = keyword in _LOWER_COUNTS
        if before is None or (after > before if lower else after < before):
            yield Change(
                (),
                f"{keyword} tightened: {'none' if before is None else before} -> {after}",
                before,
                after,
                ratchetable=True,
            )


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    yield from _numeric_changes(old, new)
    yield from _count_changes(old, new)


RULE = PropertyRule(
    code="UG208",
    name="bound-tightened",
    severity=Severity.ERROR,
    summary="A minimum, maximum, length, item or property count bound tightened.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
        | set(_LOWER_COUNTS)
        | set(_UPPER_COUNTS)
    ),
    harm=Harm.REFUSED_ON_WRITE,
)
