"""UG102 identity-changed

What it flags: a change of spec.group, spec.names.plural or spec.names.kind.

Why it matters: the apiserver never allows group or plural to change (they make up the CRD's
name) and refuses a kind change once the CRD is Established ("spec.names.kind: Invalid value:
... field is immutable"), so the upgrade fails at the CRD update.

Allowed: a change of spec.names.listKind, singular or categories, which the apiserver accepts.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair

_FIELDS = (
    ("group", "spec.group"),
    ("plural", "spec.names.plural"),
    ("kind", "spec.names.kind"),
)


def _value(crd: Crd, field: str) -> object:
    if field == "group":
        return crd.spec.get("group")
    return crd.names.get(field)


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    for field, where in _FIELDS:
        before, after = _value(old, field), _value(new, field)
        if before != after:
            yield Change(None, f"{where} changed from {before!r} to {after!r}", before, after)


RULE = CrdRule(
    code="UG102",
    name="identity-changed",
    severity=Severity.ERROR,
    summary="The CRD's group, plural or kind changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"group", "names"}),
)
