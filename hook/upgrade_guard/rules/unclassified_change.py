"""UG901 unclassified-change

What it flags: any difference between the old and new CRD that no other rule accounts for
(uniqueItems, patternProperties, a scale subresource, selectableFields, ...), one finding per
schema path or version field, naming the keywords that differ.

Why it matters: the guard only lets through what it understands. Documentation (description,
title, example, externalDocs) and printer columns are never findings.

Allowed: documentation-only changes.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.kinds import EngineRule

RULE = EngineRule(
    code="UG901",
    name="unclassified-change",
    severity=Severity.ERROR,
    summary="A change no rule accounts for.",
    doc=__doc__ or "",
)
