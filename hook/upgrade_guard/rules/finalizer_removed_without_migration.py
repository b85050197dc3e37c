"""UG721 finalizer-removed-without-migration

What it flags: a finalizer the baseline's policy declares a CRD's controller handles
(`controllers[].finalizers`) that the candidate's policy no longer declares, without a
`retired-finalizers` entry saying how stored objects lose it (a renamed finalizer is one
removed and one added).

Why it matters: objects stored while the old controller ran carry the finalizer. Once no
controller removes it, deleting such an object never finishes: it stays `Terminating`, and
so does a namespace holding it ("existing CRs may carry the old finalizer").

Allowed: the finalizer kept, or moved to `retired-finalizers` with its `migration` (for
instance: the new controller replaces it on every object it reconciles). The hook then
refuses an upgrade while any stored object still carries it (UG611).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject


def check(subject: HistorySubject) -> Iterator[tuple[str, Change]]:
    for name, before, after in subject.controllers():
        kept = set(after.finalizers) if after else set()
        retired = {r.finalizer for r in after.retired_finalizers} if after else set()
        for finalizer in before.finalizers if before else ():
            if finalizer not in kept and finalizer not in retired:
                message = (
                    f"finalizer {finalizer} is no longer handled and no retired-finalizers entry"
                    " says how stored objects lose it"
                )
                yield name, Change(None, message, old=finalizer, new=None)


RULE = HistoryCheck(
    code="UG721",
    name="finalizer-removed-without-migration",
    severity=Severity.ERROR,
    summary="A finalizer the controller handled is dropped without a declared migration.",
    doc=__doc__ or "",
    check=check,
)
