"""UG605 state-below-written

What it flags: a `controller-state-version` found on a live CRD's annotation, or at a
policy's `stored-state` path in a stored object, above the chart's. The message names the
holders.

Why it matters: a newer controller wrote that state; this release's controller does not know
how to read it (NVIDIA/nodewright#469), and a rollback would run it anyway.

Allowed: state at or below the version this release reads; roll forward, or restore the
named objects from a backup taken before the newer release.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.crd import CONTROLLER_STATE_VERSION
from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck, listed
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str | None, Change]]:
    reads = subject.chart_counters.get(CONTROLLER_STATE_VERSION)
    if reads is None:
        return
    newer = sorted(
        (s for s in subject.written_state if s.version > reads),
        key=lambda s: (-s.version, s.holder),
    )
    if newer:
        highest = newer[0].version
        yield (
            None,
            Change(
                None,
                f"{len(newer)} place(s) hold state written at controller-state-version up to"
                f" {highest}; this release reads {reads}: {listed([s.holder for s in newer])}",
                old=highest,
                new=reads,
            ),
        )


RULE = HookCheck(
    code="UG605",
    name="state-below-written",
    severity=Severity.ERROR,
    summary="The cluster holds state newer than this release reads.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "roll forward to a release that reads this state, or restore the objects named from a"
        " backup taken before the newer release"
    ),
    author="nothing: the cluster holds a newer release's state",
)
