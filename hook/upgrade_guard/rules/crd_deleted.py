"""UG608 crd-deleted

What it flags: a CRD the release being replaced applied and this release does not (dropped
from the chart, or switched off by a value such as cert-manager's `crds.enabled=false`), that
is live without `helm.sh/resource-policy: keep`. Helm deletes it after the hook passes, and
the apiserver deletes every object stored in it; the finding counts them (names only). Where
the guard may not read them (a missing `list`, or a rollback to a chart that predates the CRD
when the release that added it left no lasting grant to read it), the finding stays an error
and says why they were not counted: the guard never passes what it could not look at.

Why it matters: the objects are gone for good, with no error from Helm.

Allowed: a CRD whose live object carries `helm.sh/resource-policy: keep` (Helm reads the live
object's annotation and leaves it in place, unmanaged), a CRD no longer live, and a CRD this
release applies too.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import HookSubject, Stored

KEEP_ANNOTATION = "helm.sh/resource-policy"


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for name, crd in sorted(subject.dropped.items()):
        if crd is None or crd.annotations.get(KEEP_ANNOTATION) == "keep":
            continue
        held = subject.stored.get(name, Stored(0, ()))
        more = ", ..." if held.count > len(held.names) else ""
        shown = f" ({', '.join(held.names)}{more})" if held.names else ""
        deleted = f"the {held.count} object(s) stored in it{shown}"
        if held.unread:
            deleted = f"every object stored in it, which the guard could not count: {held.unread}"
        yield (
            name,
            Change(
                None,
                f"{subject.replaced} applies this CRD and this release does not: Helm deletes"
                f" it, and with it {deleted}",
                old=None if held.unread else held.count,
                notes=(
                    "now: keep applying the CRD (the chart's CRD switch on, or the CRD back in"
                    f" the chart), or `kubectl annotate crd {name} {KEEP_ANNOTATION}=keep`, so"
                    " Helm leaves it and its objects (unmanaged); delete them deliberately only"
                    " after a backup",
                    *subject.policy_acceptance(name, "accept-delete", "true"),
                ),
            ),
        )


RULE = HookCheck(
    code="UG608",
    name="crd-deleted",
    severity=Severity.ERROR,
    summary="Helm would delete a live CRD this release stops applying, and its stored objects.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "keep applying the CRD (the chart's CRD switch on, or the CRD back in the chart), or"
        " annotate the live CRD helm.sh/resource-policy=keep so Helm leaves it; delete it"
        " and its objects deliberately only after a backup"
    ),
    author=(
        "keep the CRD in every release, or give it helm.sh/resource-policy: keep so Helm"
        " never deletes it (a rollback below the release that added it included)"
    ),
)
