"""UG612 condition-type-no-longer-declared

What it flags: stored objects of a live CRD carrying, in `status.conditions`, a condition
type this release no longer declares: one its policy drops with `condition-breaks`, or one
the live CRD's enum on `status.conditions[].type` allows, or the replaced release's policy
declares (under Helm), that this release's vocabulary lacks.
With the count and the first names.

Why it matters: dashboards, alerts and `kubectl wait --for=condition=TYPE` key on condition
types. After the upgrade those objects keep a condition no controller updates, and new ones
never get it. A warning: nothing is refused by the apiserver, but whoever reads the type
should know before the upgrade.

Allowed: no stored object carries a type the release dropped.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck, listed
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for name, carried in sorted(subject.carried.items()):
        for condition_type in sorted(subject.retired[name].condition_types):
            holders = carried.condition_types.get(condition_type)
            if holders is None:
                continue
            message = (
                f"{holders.count:,} stored object(s) carry condition type {condition_type},"
                f" which this release no longer declares: {listed(holders.names)}; whatever"
                f" waits on it (kubectl wait --for=condition={condition_type}, dashboards,"
                " alerts) must change"
            )
            yield name, Change(None, message, old=condition_type, new=None)


RULE = HookCheck(
    code="UG612",
    name="condition-type-no-longer-declared",
    severity=Severity.WARNING,
    summary="Stored objects carry a condition type this release no longer declares.",
    doc=__doc__ or "",
    check=check,
    way_out="update what waits on the condition type named, then upgrade",
    author="keep setting the condition type, or document its replacement",
)
