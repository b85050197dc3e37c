"""UG219 default-changed

What it flags: a default changed or removed, compared as JSON values (1 and 1.0 are the same
default; formatting and key order never count).

Why it matters: a default is part of the contract. A client that omits the field now gets
another behaviour, and stored objects read back differently: the apiserver writes a default
into an object when it stores it, so objects written while the old default was in force keep
its value, but objects last written before that default existed hold no value and read back
with the new default (or, once it is removed, without one). Every seed policy this project
follows (ptah's guard, Grafana's, Hermes', OLM v1) counts a changed or removed default as
breaking, so this is an error; a policy line (``default-changed: warning``) relaxes it.

Allowed: the same default written differently (1 and 1.0; key order).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    if "default" not in old:
        return
    before = old["default"]
    if "default" not in new:
        yield Change(
            (),
            f"default removed (was {schema.short(before)}): stored objects without a value"
            " read back without one, and new objects omitting the field get none",
            before,
            None,
        )
    elif not schema.same_value(before, new["default"]):
        after = new["default"]
        yield Change(
            (),
            f"default changed: {schema.short(before)} -> {schema.short(after)}: stored objects"
            " without a value read back with the new one, and so do new objects omitting it",
            before,
            after,
        )


RULE = PropertyRule(
    code="UG219",
    name="default-changed",
    severity=Severity.ERROR,
    summary="A default was changed or removed.",
    ratcheting="(defaulting, not validation)",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"default"}),
    harm=Harm.CHANGED_ON_READ,
)
