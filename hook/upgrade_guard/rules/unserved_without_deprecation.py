"""UG802 unserved-without-deprecation

What it flags: a served version that stops being served (``served: false``, removed from
``spec.versions``, or its CRD removed) without the release before marking it
``deprecated: true``, when its tier has a deprecation window.

Why it matters: ``deprecated: true`` makes the apiserver warn every client that uses the
version (kubectl prints "<group>/<version> <Kind> is deprecated"; held to kube-apiserver
v1.35.4 in tests/cluster/test_lifecycle_truth.py); without it, the first sign a client
gets is a 404 after the upgrade. Every
published policy (Kubernetes', Weave GitOps ADR 14, Grafana's and Hermes') requires the
announcement before the removal.

Allowed: a version marked deprecated in an earlier release and served through its window
(see UG803); a tier whose window is empty (alpha by default).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for index, crd, version, window, marked in history.ends_of_service():
        if marked is not None:
            continue
        served = partial(history.served, crd=crd, version=version)
        served_since = history.run_start(index - 1, served)
        before, after = history.releases[index - 1], history.releases[index]
        since = history.releases[served_since or 0]
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} ({history.tier(crd, version)}) stopped being served in {after}, but"
                f" {before} did not mark it deprecated (served since {since}); the window is"
                f" {window} after the deprecation"
            ),
            old=before.as_data(),
            new=after.as_data(),
        )


RULE = LifecycleRule(
    code="UG802",
    name="unserved-without-deprecation",
    severity=Severity.ERROR,
    summary="A served version stopped being served without a release marking it deprecated.",
    doc=__doc__ or "",
    check=check,
)
