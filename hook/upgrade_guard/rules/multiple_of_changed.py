"""UG209 multiple-of-changed

What it flags: multipleOf added, or changed to a value the old one is not a multiple of.

Why it matters: stored numbers that are not multiples of the new value can no longer be
created as they are, and fail every update before Kubernetes 1.30 (ratcheted from 1.30).

Allowed: multipleOf removed, or changed to a divisor of the old value (4 -> 2).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def _divides(divisor: float, value: float) -> bool:
    from fractions import Fraction  # (decimal and fractions, for the few multipleOf changes)

    quotient = Fraction(str(value)) / Fraction(str(divisor))
    return quotient.denominator == 1


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = old.get("multipleOf"), new.get("multipleOf")
    if after is None or (before is not None and _divides(after, before)):
        return
    yield Change((), f"multipleOf changed: {before} -> {after}", before, after, ratchetable=True)


RULE = PropertyRule(
    code="UG209",
    name="multiple-of-changed",
    severity=Severity.ERROR,
    summary="multipleOf was added or changed to a value the old one is not a multiple of.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"multipleOf"}),
    harm=Harm.REFUSED_ON_WRITE,
)
