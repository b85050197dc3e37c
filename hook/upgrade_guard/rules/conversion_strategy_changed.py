"""UG108 conversion-strategy-changed

What it flags: spec.conversion.strategy changed (None and Webhook).

Why it matters: to Webhook, every read and write of a non-storage version now depends on a
webhook that must be running before the CRD changes; to None, versions whose schemas differ are
converted by rewriting apiVersion only. Webhook client settings (service, caBundle) are not
compared: they say where the webhook runs, not what is stored.

Allowed: the same strategy on both sides.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    before, after = old.conversion_strategy, new.conversion_strategy
    if before != after:
        yield Change(None, f"conversion strategy changed from {before} to {after}", before, after)


RULE = CrdRule(
    code="UG108",
    name="conversion-strategy-changed",
    severity=Severity.ERROR,
    summary="The conversion strategy changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"conversion"}),
)
