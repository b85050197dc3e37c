"""UG217 embedded-resource-changed

What it flags: x-kubernetes-embedded-resource turned on, or turned off where the node does not
keep unknown fields.

Why it matters: turned on, the apiserver requires apiVersion and kind in the embedded object
(every update of a stored object without them fails) and prunes and validates its metadata;
turned off without x-kubernetes-preserve-unknown-fields, the embedded metadata (name, labels)
is pruned by the surrounding schema.

Allowed: turned off on a node that keeps x-kubernetes-preserve-unknown-fields: true.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before = old.get("x-kubernetes-embedded-resource") is True
    after = new.get("x-kubernetes-embedded-resource") is True
    if before != after and (after or not schema.preserves_unknown_fields(new)):
        yield Change(
            (), f"x-kubernetes-embedded-resource {'on' if after else 'off'}", before, after
        )


RULE = PropertyRule(
    code="UG217",
    name="embedded-resource-changed",
    severity=Severity.ERROR,
    summary="x-kubernetes-embedded-resource was turned on or off.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-embedded-resource"}),
    harm=Harm.BOTH,
)
