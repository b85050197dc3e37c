"""UG703 schema-digest-stale

What it flags: a CRD whose crd-schema-digest annotation is missing or differs from the
digest of its spec.

Why it matters: the digest records which spec the stamped version stands for. A stale digest
means the spec was edited after it was stamped, so the version may not have been raised for
that edit.

Allowed: a digest `upgrade-guard stamp` wrote. Formatting, comments, key order,
descriptions, titles and examples do not change it.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG703",
    name="schema-digest-stale",
    severity=Severity.ERROR,
    summary="A CRD's crd-schema-digest is not the digest of its spec.",
    doc=__doc__ or "",
)
