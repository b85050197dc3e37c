"""UG212 default-changed

What it flags: a default added to an existing field, changed, or removed, compared as JSON
values (1 and 1.0 are the same default; formatting and key order never count).

Why it matters: the apiserver applies the storage version's defaults when it reads an object
from etcd, without writing it back. Untouched stored objects therefore read back with the new
default (or without the old one) at once, and the controller acts on that.

Allowed: a default on a field that is itself new (nothing stored has it), or the same value
written differently.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule

_ABSENT = object()


def compare(old: schema.Node, new: schema.Node) -> Iterator[Change]:
    before, after = old.get("default", _ABSENT), new.get("default", _ABSENT)
    if before is _ABSENT and after is _ABSENT:
        return
    if before is _ABSENT:
        yield Change((), f"default added: {schema.short(after)}", None, after)
    elif after is _ABSENT:
        yield Change((), f"default removed (was {schema.short(before)})", before, None)
    elif not schema.same_value(before, after):
        yield Change(
            (), f"default changed: {schema.short(before)} -> {schema.short(after)}", before, after
        )


RULE = Rule(
    code="UG212",
    name="default-changed",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="A default was added, changed or removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"default"}),
)
