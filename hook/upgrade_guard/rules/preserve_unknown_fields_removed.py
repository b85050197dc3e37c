"""UG216 preserve-unknown-fields-removed

What it flags: x-kubernetes-preserve-unknown-fields: true removed from a value location that
can hold fields (an object, or a node without a type). A field declared for the first time
below x-kubernetes-preserve-unknown-fields had it before: it was kept as any value.

Why it matters: the subtree is pruned from then on: every stored field the schema does not
declare vanishes from reads at once and is lost at the next write. Silent data loss.

Allowed: x-kubernetes-preserve-unknown-fields: true added; removed where the new type is a
scalar (a stored object there fails the type, which type-changed reports).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location

_SCALARS = frozenset({"string", "integer", "number", "boolean"})


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    if (
        old.get("x-kubernetes-preserve-unknown-fields") is True
        and new.get("x-kubernetes-preserve-unknown-fields") is not True
        and new.get("type") not in _SCALARS
        and new.get("x-kubernetes-int-or-string") is not True
    ):
        yield Change(
            (),
            "x-kubernetes-preserve-unknown-fields removed: undeclared stored fields are pruned",
            True,
            None,
        )


RULE = PropertyRule(
    code="UG216",
    name="preserve-unknown-fields-removed",
    severity=Severity.ERROR,
    summary="x-kubernetes-preserve-unknown-fields was removed; unknown fields get pruned.",
    ratcheting="(pruning, not validation)",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-preserve-unknown-fields"}),
    harm=Harm.CHANGED_ON_READ,
)
