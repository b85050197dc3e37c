"""UG603 schema-below-live

What it flags: a live CRD's `crd-schema-version` above the chart's: a rollback below the
schema a newer release applied.

Why it matters: objects stored under the newer schema may use fields the older one prunes or
values it refuses; the engine's findings say which, this check says that it is a rollback at
all.

Allowed: the same or a newer schema version; roll forward instead of back.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import ACCEPT_SCHEMA, HookSubject, digest_of, stamped_number


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for name, ours, theirs in subject.both:
        mine, live = (
            stamped_number(ours, subject.schema_key),
            stamped_number(theirs, subject.schema_key),
        )
        if mine is not None and live is not None and live > mine:
            yield (
                name,
                Change(
                    None,
                    f"the live CRD is at schema version {live}, the chart's at {mine}:"
                    " a newer release wrote this schema",
                    old=live,
                    new=mine,
                    notes=subject.policy_acceptance(name, ACCEPT_SCHEMA, digest_of(ours)),
                ),
            )


RULE = HookCheck(
    code="UG603",
    name="schema-below-live",
    severity=Severity.ERROR,
    summary="The live CRD carries a newer schema version than the chart.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "roll forward to a release at this schema version or newer, or roll back to the "
        "revision still deployed (helm history RELEASE); a rollback below would prune or "
        "refuse what the newer release stored"
    ),
    author="nothing: the cluster holds a newer release's schema",
)
