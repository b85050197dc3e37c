"""UG203 required-added-with-default

What it flags: a field that becomes required (or is new and required) and has a default.

Why it matters: the apiserver fills the default in before validation, on reads and writes, so
stored objects keep working; they read back with the default, which the report shows.

Allowed: this is the allowed side of required-added; it is reported as info.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    for name, has_default in schema.newly_required(old, new):
        if has_default:
            yield Change((schema.segment(name),), "newly required, filled by its default")


RULE = PropertyRule(
    code="UG203",
    name="required-added-with-default",
    severity=Severity.INFO,
    summary="A field became required and has a default.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"required"}),
    harm=Harm.NONE,
)
