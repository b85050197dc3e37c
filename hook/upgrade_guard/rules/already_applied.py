"""UG607 already-applied

What it flags: live CRDs whose normalized spec equals the chart's, for example when Argo CD
or Flux (`upgrade.crds: CreateReplace`) applied them before the hook ran.

Why it matters: the CRD change, if there was one, has already happened: the guard cannot
protect stored objects from it any more, and says so rather than passing silently.

Allowed: everything; run the guard before the CRDs are applied (see the Argo CD and Flux
sections).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck, listed
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str | None, Change]]:
    applied = [name for name, ours, theirs in subject.both if ours.spec == theirs.spec]
    if applied:
        yield (
            None,
            Change(
                None,
                f"{len(applied)} live CRD(s) already equal the chart's ({listed(applied)}):"
                " nothing left to guard for these CRDs",
            ),
        )


RULE = HookCheck(
    code="UG607",
    name="already-applied",
    severity=Severity.INFO,
    summary="Live CRDs that already equal the chart's: nothing left to guard.",
    doc=__doc__ or "",
    check=check,
)
