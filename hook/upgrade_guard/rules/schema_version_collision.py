"""UG604 schema-version-collision

What it flags: the live CRD and the chart carry the same `crd-schema-version` but their
normalized specs differ.

Why it matters: the schema version no longer names one schema: someone changed a CRD without
a bump, or applied it by hand, and every check that trusts the counter is misled.

Allowed: equal specs under equal versions; bump the version (`upgrade-guard stamp --bump`)
when the spec changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import ACCEPT_SCHEMA, HookSubject, digest_of, stamped_number


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for name, ours, theirs in subject.both:
        mine = stamped_number(ours, subject.schema_key)
        same_version = mine is not None and mine == stamped_number(theirs, subject.schema_key)
        if same_version and ours.spec != theirs.spec:
            yield (
                name,
                Change(
                    None,
                    f"the live CRD and the chart both say schema version {mine} but their specs"
                    " differ: one of them was changed without a bump",
                    notes=subject.policy_acceptance(name, ACCEPT_SCHEMA, digest_of(ours)),
                ),
            )


RULE = HookCheck(
    code="UG604",
    name="schema-version-collision",
    severity=Severity.ERROR,
    summary="A live CRD carries the chart's schema version with another spec.",
    doc=__doc__ or "",
    check=check,
    way_out="stay on the deployed release and report it to the chart's authors",
    author="bump crd-schema-version in the chart (upgrade-guard stamp --schema-version N)",
)
