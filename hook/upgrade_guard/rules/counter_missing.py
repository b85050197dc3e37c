"""UG708 counter-missing

What it flags: a counter declared in the policy's `counters` (and controller-state-version
whenever a CRD on either side carries it) that a CRD lacks, carries in a non-canonical form,
or carries with another value than the other CRDs. A Validating- or
MutatingWebhookConfiguration in the directory that carries a counter (on either side) is
held to the same: it carries every counter, with the CRDs' value.

Why it matters: a counter says which controller state or contract the CRDs go with. Without
it on every CRD, the checks on it (UG709-UG711) and the cluster hook's image pairing cannot
be made.

Allowed: the same canonical value on every CRD (`upgrade-guard stamp DIR --counter NAME=N`).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import HistorySubject, stamped


def check(subject: HistorySubject) -> Iterator[tuple[str | None, Change]]:
    for counter in subject.counters:
        found = stamped(subject.carriers(subject.candidate), counter.annotation)
        yield from found.missing_changes(counter.annotation, "run upgrade-guard stamp")
        disagreement = found.disagreement(counter.annotation)
        if disagreement is not None:
            yield None, disagreement


RULE = HistoryCheck(
    code="UG708",
    name="counter-missing",
    severity=Severity.ERROR,
    summary="A counter is missing, not canonical, or differs between CRDs.",
    doc=__doc__ or "",
    check=check,
)
