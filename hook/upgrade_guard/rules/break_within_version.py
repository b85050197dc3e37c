"""UG801 break-within-version

What it flags: a breaking change inside a version that both a release and the one before
serve (any error the engine reports on that version: a property removed, an enum
restricted, a new required field, ...), where the version's tier does not allow it. By
default stable and beta refuse; alpha needs a declared break for that release
(``lifecycle.breaks``); a tier with ``breaking-changes: allow`` is not checked.

Why it matters: clients written against a version keep using it; a version is a promise
that what was valid stays valid and what was stored reads back the same. Kubernetes'
deprecation policy and Weave GitOps ADR 14 let only alpha versions change incompatibly.

Allowed: the same change in a new version; compatible changes (a new optional field);
a break in an alpha version declared for that release.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.settings import BreakingChanges
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule

_SHOWN = 8


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for (index, crd, version), findings in sorted(history.breaking_changes.items()):
        tier = history.tier(crd, version)
        choice = history.tier_policy(crd, version).breaking_changes
        if choice is BreakingChanges.ALLOW:
            continue
        before, after = history.releases[index - 1], history.releases[index]
        declared = next(
            (
                d
                for d in history.settings.breaks
                if (d.crd, d.version, d.release) == (crd, version, after.tag)
            ),
            None,
        )
        count = len(findings)
        notes = [f"{f.code} {f.rule} {f.path or '(version)'}: {f.message}" for f in findings]
        if count > _SHOWN:
            notes[_SHOWN:] = [f"... and {count - _SHOWN} more (see new in the JSON report)"]
        excused = None
        if declared is not None and choice is BreakingChanges.DECLARE:
            excused = declared.reason
        elif declared is not None:
            notes.append(f"a break is declared for {after.tag}, but the {tier} tier refuses breaks")
        elif choice is BreakingChanges.REFUSE:
            notes.append(f"the {tier} tier refuses breaks: make the change in a new version")
        else:
            notes.append(
                f"the {tier} tier needs a declared break: declare it in lifecycle.breaks"
                f" for {after.tag}, or make the change in a new version"
            )
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{before} → {after}: {count} breaking change{'' if count == 1 else 's'}"
                f" inside {tier} version {version}, served by both"
            ),
            old=before.as_data(),
            new=after.as_data(
                changes=[{"code": f.code, "path": f.path, "message": f.message} for f in findings]
            ),
            notes=tuple(notes),
            excused=excused,
        )


RULE = LifecycleRule(
    code="UG801",
    name="break-within-version",
    severity=Severity.ERROR,
    summary="A served version changed incompatibly where its tier does not allow it.",
    doc=__doc__ or "",
    check=check,
)
