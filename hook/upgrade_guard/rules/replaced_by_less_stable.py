"""UG804 replaced-by-less-stable

What it flags: a version that stops being served while its CRD stays, when no version at
least as stable is served in that release: v1 dropped while only v2beta1 remains, a beta
dropped for an alpha (Kubernetes' deprecation rule 3; ADR 14: a stable version is only
removed when there is another stable version).

Why it matters: users of a stable API chose it for its guarantees; moving them to a less
stable version takes those guarantees away and, by the less stable tier's rules, may
break them again without a window.

Allowed: replacing a version with one of the same or a more stable tier (v1beta1 by
v1beta2 or v1).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for index, crd, version in history.transitions():
        if crd not in history.releases[index].crds:
            continue
        if not history.stopped_serving(index, crd, version):
            continue
        tier = history.tier(crd, version)
        remaining = [v for v in history.versions(index, crd) if history.served(index, crd, v)]
        if any(history.tier(crd, other) >= tier for other in remaining):
            continue
        after = history.releases[index]
        shown = ", ".join(f"{v} ({history.tier(crd, v)})" for v in remaining) or "none"
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} ({tier}) stopped being served in {after}, leaving no served"
                f" version as stable: served there: {shown}"
            ),
            old=history.releases[index - 1].as_data(),
            new=after.as_data(served=remaining),
        )


RULE = LifecycleRule(
    code="UG804",
    name="replaced-by-less-stable",
    severity=Severity.ERROR,
    summary="A version stopped being served and no version as stable is served instead.",
    doc=__doc__ or "",
    check=check,
)
