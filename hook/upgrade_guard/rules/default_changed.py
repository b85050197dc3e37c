"""UG219 default-changed

What it flags: a default changed or removed, compared as JSON values (1 and 1.0 are the same
default; formatting and key order never count).

Why it matters: the apiserver writes a default into an object when it stores it, so objects
written while the old default was in force keep its value. Objects last written before that
default existed hold no value and read back with the new default (or, once it is removed,
without one); new objects that omit the field get the new default. Which stored objects are
hit depends on their history, so this is a warning.

Allowed: the same default written differently.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule


def compare(old: schema.Node, new: schema.Node) -> Iterator[Change]:
    if "default" not in old:
        return
    before = old["default"]
    if "default" not in new:
        yield Change((), f"default removed (was {schema.short(before)})", before, None)
    elif not schema.same_value(before, new["default"]):
        after = new["default"]
        yield Change(
            (), f"default changed: {schema.short(before)} -> {schema.short(after)}", before, after
        )


RULE = Rule(
    code="UG219",
    name="default-changed",
    severity=Severity.WARNING,
    scope=Scope.PROPERTY,
    summary="A default was changed or removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"default"}),
)
