"""UG803 deprecation-window-short

What it flags: a version that stops being served (``served: false``, removed, or its CRD
removed) fewer releases, or less time, after the release that marked it
``deprecated: true`` than its tier's window. Both parts must hold: Kubernetes' default is
stable 3 releases and 12 months, beta 3 releases and 9 months, alpha none.

Why it matters: the window is the time users have to move their manifests, their
controllers and their stored objects to the replacement version; a release that cuts it
short breaks everyone who upgrades on a normal cadence.

Allowed: stopping to serve the version once both parts of the window have passed since
the first release of the unbroken run that marked it deprecated.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory, elapsed
from upgrade_guard.rules.kinds import LifecycleRule


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for index, crd, version, window, marked in history.ends_of_service():
        if marked is None or history.window_holds(window, marked, index):
            continue
        deprecated, after = history.releases[marked], history.releases[index]
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} ({history.tier(crd, version)}) stopped being served in {after},"
                f" {elapsed(deprecated, after, index - marked)} after {deprecated} marked it"
                f" deprecated; the window is {window}"
            ),
            old=deprecated.as_data(),
            new=after.as_data(),
        )


RULE = LifecycleRule(
    code="UG803",
    name="deprecation-window-short",
    severity=Severity.ERROR,
    summary="A deprecated version stopped being served before its tier's window passed.",
    doc=__doc__ or "",
    check=check,
)
