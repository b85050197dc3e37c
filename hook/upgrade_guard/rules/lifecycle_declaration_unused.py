"""UG808 lifecycle-declaration-unused

What it flags: an entry of ``lifecycle.breaks`` or ``lifecycle.storage-migrations`` that
names a release not among the releases read, a break for a release that breaks nothing in
that version, or a storage migration of a version never seen or still the storage version
in (or after) the release named.

Why it matters: a declaration that matches nothing is a typo or a stale entry, and a stale
entry can quietly excuse a later, real break (as UG902 keeps declared breaks honest).

Allowed: declarations that each excuse or enable exactly what they name.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.settings import Declaration
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule


def _problem(history: ReleaseHistory, declaration: Declaration, kind: str) -> str | None:
    tags = [release.tag for release in history.releases]
    crd, version = declaration.crd, declaration.version
    if declaration.release not in tags:
        return f"names release {declaration.release}, which is not among the releases read"
    index = tags.index(declaration.release)
    if kind == "breaks":
        if (index, crd, version) not in history.breaking_changes:
            return f"{declaration.release} makes no breaking change inside {version}"
        return None
    if not any(history.entry(at, crd, version) for at in range(len(tags))):
        return f"{version} of {crd} is in no release read"
    if any(history.storage(at, crd) == version for at in range(index, len(tags))):
        return f"{version} is still the storage version in or after {declaration.release}"
    return None


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    last = len(history.releases) - 1
    settings = history.settings
    for kind, declarations in (
        ("breaks", settings.breaks),
        ("storage-migrations", settings.storage_migrations),
    ):
        for declaration in declarations:
            problem = _problem(history, declaration, kind)
            if problem is None:
                continue
            yield LifecycleViolation(
                crd=declaration.crd,
                version=declaration.version,
                release=last,
                message=f"lifecycle.{kind} entry for {declaration.release}: {problem}",
                old=None,
                new={"tag": declaration.release, "date": None},
            )


RULE = LifecycleRule(
    code="UG808",
    name="lifecycle-declaration-unused",
    severity=Severity.ERROR,
    summary="A lifecycle break or storage migration declaration matches nothing.",
    doc=__doc__ or "",
    check=check,
)
