"""UG217 embedded-resource-changed

What it flags: x-kubernetes-embedded-resource turned on or off.

Why it matters: turned on, the apiserver requires apiVersion and kind in the embedded object
and prunes and validates its metadata, which stored values may not satisfy; turned off, the
embedded metadata loses that treatment and may be pruned by the surrounding schema.

Allowed: the same setting on both sides.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule
from upgrade_guard.schema import Node


def compare(old: Node, new: Node) -> Iterator[Change]:
    before = old.get("x-kubernetes-embedded-resource") is True
    after = new.get("x-kubernetes-embedded-resource") is True
    if before != after:
        yield Change(
            (), f"x-kubernetes-embedded-resource {'on' if after else 'off'}", before, after
        )


RULE = Rule(
    code="UG217",
    name="embedded-resource-changed",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="x-kubernetes-embedded-resource was turned on or off.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-embedded-resource"}),
)
