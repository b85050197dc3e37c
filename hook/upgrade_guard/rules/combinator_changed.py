"""UG218 combinator-changed

What it flags: allOf, anyOf, oneOf or not added to a value location or changed in anything
but documentation. One finding per keyword; what changed inside is not judged, because a
tightening inside not or one branch of anyOf can loosen the whole.

Why it matters: stored values may fail the new combination: they can no longer be created as
they are, and before Kubernetes 1.30 every update of such an object fails; from 1.30 the
updates that change the value the keyword sits on.

Allowed: the keyword removed, or only descriptions inside it changed; the anyOf of integer
and string that an x-kubernetes-int-or-string node may carry, which adds nothing to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule

# The anyOf an x-kubernetes-int-or-string node may carry (controller-gen writes it): it
# says what the extension says and constrains nothing more.
_INT_OR_STRING_BRANCHES = (
    [{"type": "integer"}, {"type": "string"}],
    [{"type": "string"}, {"type": "integer"}],
)


def _combinators(node: schema.Node) -> dict[str, Any]:
    """node's allOf, anyOf, oneOf and not, without documentation at any depth, less the
    anyOf that only restates x-kubernetes-int-or-string."""
    written = {keyword: node[keyword] for keyword in schema.JUNCTORS if keyword in node}
    kept = dict(schema.without_documentation(written))
    if node.get("x-kubernetes-int-or-string") is True and any(
        schema.same_value(kept.get("anyOf"), branches) for branches in _INT_OR_STRING_BRANCHES
    ):
        del kept["anyOf"]
    return kept


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    old_plain, new_plain = _combinators(old), _combinators(new)
    for keyword in schema.JUNCTORS:
        after = new_plain.get(keyword)
        if after is None:
            continue
        before = old_plain.get(keyword)
        if before is None:
            yield Change((), f"{keyword} added", None, after, ratchetable=True)
        elif not schema.same_value(before, after):
            yield Change((), f"{keyword} changed", before, after, ratchetable=True)


RULE = PropertyRule(
    code="UG218",
    name="combinator-changed",
    severity=Severity.ERROR,
    summary="allOf, anyOf, oneOf or not was added or changed.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset(schema.JUNCTORS),
    harm=Harm.REFUSED_ON_WRITE,
)
