"""UG110 served-versions-incompatible

What it flags: with conversion strategy None, two served versions of the new CRD whose
schemas disagree in a way the schema rules would refuse between releases, where the old CRD
did not already have that disagreement. The finding names the pair as ``A->B`` (objects
written as A, read and written back as B) and the schema rule that found it.

Why it matters: strategy None converts by rewriting apiVersion only, so an object stored
through one version is read, defaulted, pruned and validated by the other version's schema.

Allowed: served versions with identical schemas, or differences the old CRD already had.
"""

from __future__ import annotations

from dataclasses import replace

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import EngineRule, Rule


def disagreement(written_as: str, read_as: str, rule: Rule, change: Change) -> Change:
    """What objects written as one served version and read as another meet: what the schema
    rule found between the two versions' schemas, said of them."""
    message = (
        f"objects written as {written_as} and read as {read_as}: {change.message}"
        f" ({rule.code} {rule.name})"
    )
    return replace(change, message=message)


RULE = EngineRule(
    code="UG110",
    name="served-versions-incompatible",
    severity=Severity.ERROR,
    summary="Served versions of the new CRD disagree and conversion is None.",
    ratcheting="as the schema rule it wraps",
    doc=__doc__ or "",
)
