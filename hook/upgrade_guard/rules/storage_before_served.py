"""UG805 storage-before-served

What it flags: the storage version moving to a version that was not served, with the
previous storage version, for the tier's ``served-before-storage`` window before the
switch (Kubernetes' rule 4b and the default: at least one release serving both; Grafana's
policy: 6 months and one minor release).

Why it matters: applying the new release adds the new storage version to
``status.storedVersions``. Rolling back applies the release before's CRD, and when that CRD
does not list the version, the apiserver refuses the update: the rollback fails. A release
that served the new version can be rolled back to, and reads what the new one stored
(both held to kube-apiserver v1.35.4 in tests/cluster/test_lifecycle_truth.py).

Allowed: switching storage to a version served (alongside the old storage version) for
the whole window; a CRD's first storage version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory, elapsed
from upgrade_guard.rules.kinds import LifecycleRule


def _both_served(history: ReleaseHistory, crd: str, old: str, new: str) -> Callable[[int], bool]:
    return lambda at: history.served(at, crd, new) and history.served(at, crd, old)


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for index in range(1, len(history.releases)):
        for crd in history.crd_names:
            old, new = history.storage(index - 1, crd), history.storage(index, crd)
            if old is None or new is None or old == new:
                continue
            window = history.tier_policy(crd, new).served_before_storage
            served_since = history.run_start(index - 1, _both_served(history, crd, old, new))
            if served_since is not None and history.window_holds(window, served_since, index):
                continue
            after = history.releases[index]
            if served_since is None:
                how = f"the release before ({history.releases[index - 1]}) did not serve both"
            else:
                since = history.releases[served_since]
                span = elapsed(since, after, index - served_since)
                how = f"both served only since {since}: {span}"
            yield LifecycleViolation(
                crd=crd,
                version=new,
                release=index,
                message=(
                    f"storage moved from {old} to {new} in {after}; {how}; the window is {window}"
                ),
                old=history.releases[index - 1].as_data(storage=old),
                new=after.as_data(storage=new),
            )


RULE = LifecycleRule(
    code="UG805",
    name="storage-before-served",
    severity=Severity.ERROR,
    summary="The storage version moved to a version not yet served long enough beside it.",
    doc=__doc__ or "",
    check=check,
)
