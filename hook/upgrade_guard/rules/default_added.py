"""UG212 default-added

What it flags: a default added to a field that exists on both sides.

Why it matters: the apiserver applies defaults when it reads an object from etcd, without
writing it back. Stored objects that lack the field therefore read back with the new default
at once, untouched, and the controller acts on that.

Allowed: a default on a field that is itself new (nothing stored has it). A field declared
for the first time below x-kubernetes-preserve-unknown-fields is not new: stored objects could
hold anything there, and those without it read back the default.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    if "default" in new and "default" not in old:
        yield Change((), f"default added: {schema.short(new['default'])}", None, new["default"])


RULE = PropertyRule(
    code="UG212",
    name="default-added",
    severity=Severity.ERROR,
    summary="A default was added to an existing field.",
    ratcheting="(defaulting, not validation)",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"default"}),
    harm=Harm.CHANGED_ON_READ,
)
