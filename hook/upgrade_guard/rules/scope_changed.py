"""UG103 scope-changed

What it flags: spec.scope changed between Namespaced and Cluster.

Why it matters: the apiserver refuses a scope change once the CRD is Established, and the
stored objects' keys in etcd depend on the scope.

Allowed: the same scope on both sides.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    before, after = old.spec.get("scope"), new.spec.get("scope")
    if before != after:
        yield Change(None, f"scope changed from {before} to {after}", before, after)


RULE = CrdRule(
    code="UG103",
    name="scope-changed",
    severity=Severity.ERROR,
    summary="The CRD's scope changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"scope"}),
)
