"""UG201 property-removed

What it flags: a value location (a property, array items, additionalProperties) of the old
schema that the new schema no longer declares, reported once at the highest removed path
(the engine does not walk below it).

Why it matters: the apiserver prunes undeclared fields when it decodes an object from etcd
and before it stores one, so every stored value there vanishes from reads at once and is lost
at the next write. This is silent data loss, not a validation error.

Allowed: the same removal under a parent that sets x-kubernetes-preserve-unknown-fields: true
or declares additionalProperties, so the values are kept; apiVersion, kind or metadata of
the root or of an embedded resource, which the apiserver keeps whether declared or not.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def _keeps(at: schema.Location, part: str) -> bool:
    node = at.new
    if schema.preserves_unknown_fields(node):
        return True
    resource = not at.path or (
        schema.is_embedded_resource(at.old) and schema.is_embedded_resource(node)
    )
    if resource and part in schema.RESOURCE_FIELDS:
        return True
    return part != schema.ADDITIONAL and node.get("additionalProperties") not in (None, False)


def compare(at: schema.Location) -> Iterator[Change]:
    for part in at.old_children:
        if part not in at.new_children and not _keeps(at, part):
            yield Change((part,), "removed from the schema: stored values are pruned on read")


RULE = PropertyRule(
    code="UG201",
    name="property-removed",
    severity=Severity.ERROR,
    summary="A field was removed from the schema; its stored values are pruned.",
    ratcheting="(pruning, not validation)",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"properties", "items", "additionalProperties"}),
    harm=Harm.CHANGED_ON_READ,
)
