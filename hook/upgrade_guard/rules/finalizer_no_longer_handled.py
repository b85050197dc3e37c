"""UG611 finalizer-no-longer-handled

What it flags: stored objects of a live CRD carrying a finalizer this release no longer
handles, with the count and the first names: one its policy lists under
`retired-finalizers`, or (under Helm) one the replaced release's policy declares in
`controllers[].finalizers` that this release's declaration of the CRD lacks. When the
objects could not all be read (a missing `list` permission, the `--evidence-limit`, the
deadline) and none read carries it, it says so and refuses too: the guard cannot tell.

Why it matters: only the controller that added a finalizer removes it. Once no controller
handles it, deleting such an object never finishes: it hangs in `Terminating` forever, and
a namespace holding one never goes away.

Allowed: no stored object carries a retired finalizer (the old controller, or the declared
migration, removed it from all of them). Finalizers of other controllers, and those the
policy does not retire, are not this check's concern.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck, listed
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for name, carried in sorted(subject.carried.items()):
        for retired in subject.retired[name].finalizers:
            finalizer = retired.finalizer
            holders = carried.finalizers.get(finalizer)
            if holders is not None:
                migration = (
                    f"declared migration: {retired.migration}"
                    if retired.migration
                    else f"{subject.replaced} handles it; no migration declared"
                )
                message = (
                    f"{holders.count:,} stored object(s) carry finalizer {finalizer}, which this"
                    f" release no longer handles: {listed(holders.names)}; deleting them never"
                    f" finishes ({migration})"
                )
            elif carried.problem or not carried.complete:
                why = carried.problem or f"stopped at the limit of {carried.checked:,} objects"
                message = (
                    f"cannot tell whether stored objects carry finalizer {finalizer}, which this"
                    f" release no longer handles: {why}"
                )
            else:
                continue
            yield name, Change(None, message, old=finalizer, new=None)


RULE = HookCheck(
    code="UG611",
    name="finalizer-no-longer-handled",
    severity=Severity.ERROR,
    summary="Stored objects carry a finalizer this release no longer handles.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "let the release that handles the finalizer remove it from the objects named (or run"
        " the declared migration), then upgrade; remove it by hand only after doing the"
        " cleanup it stands for"
    ),
    author=(
        "keep removing the old finalizer in this release's controller, and retire it in a later one"
    ),
)
