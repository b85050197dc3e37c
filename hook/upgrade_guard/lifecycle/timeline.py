"""Each CRD version's history over the releases read: served, deprecated, storage, gone.

Releases arrive in release order (``load/release_tags`` sorts tags by version). A rule asks
about one version at one release index; the windows it checks count releases by index
and time by the releases' dates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, partial
from typing import Any

from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding
from upgrade_guard.lifecycle.settings import LifecycleSettings, Tier, TierPolicy, Window

_KUBE_VERSION = re.compile(r"v[1-9][0-9]*(?:(alpha|beta)[1-9][0-9]*)?\Z")


def tier_from_name(version: str) -> Tier:
    """Kubernetes' reading of a version name: vN stable, vNbetaM beta, vNalphaM alpha. A name
    of another shape sorts below every alpha in Kubernetes' version priority: alpha here."""
    match = _KUBE_VERSION.match(version)
    if match is None or match.group(1) == "alpha":
        return Tier.ALPHA
    return Tier.BETA if match.group(1) == "beta" else Tier.STABLE


@dataclass(frozen=True)
class Release:
    tag: str
    date: datetime
    crds: Mapping[str, Crd]

    def __str__(self) -> str:
        return f"{self.tag} ({self.date:%Y-%m-%d})"

    def as_data(self, **details: Any) -> dict[str, Any]:
        """The release as a finding's old or new value in the JSON report."""
        return {"tag": self.tag, "date": self.date.isoformat(), **details}


def elapsed(start: Release, end: Release, releases: int) -> str:
    """How far apart two releases are, in releases and days."""
    days = (end.date - start.date).days
    return (
        f"{releases} release{'' if releases == 1 else 's'} and"
        f" {days} day{'' if abs(days) == 1 else 's'}"
    )


@dataclass(frozen=True)
class LifecycleViolation:
    """What a lifecycle rule reports; the registry adds code, name and severity."""

    crd: str
    version: str
    release: int  # index of the release that makes it a violation
    message: str
    old: Any = None
    new: Any = None
    notes: tuple[str, ...] = ()
    excused: str | None = None


@dataclass(frozen=True)
class ReleaseHistory:
    """The releases read, oldest first, and the policy they are judged by."""

    releases: tuple[Release, ...]
    settings: LifecycleSettings
    # the engine's errors inside versions served by a release and the one before, by
    # (release index, crd, version): what UG801 judges (see verify.breaking_changes)
    breaking_changes: Mapping[tuple[int, str, str], Sequence[Finding]]

    @cached_property
    def crd_names(self) -> list[str]:
        return sorted({name for release in self.releases for name in release.crds})

    def entry(self, index: int, crd: str, version: str) -> Mapping[str, Any] | None:
        """The spec.versions entry of version at release index, None when absent."""
        found = self.releases[index].crds.get(crd)
        return None if found is None else found.versions.get(version)

    def served(self, index: int, crd: str, version: str) -> bool:
        entry = self.entry(index, crd, version)
        return entry is not None and bool(entry.get("served"))

    def deprecated(self, index: int, crd: str, version: str) -> bool:
        entry = self.entry(index, crd, version)
        return entry is not None and entry.get("deprecated") is True

    def storage(self, index: int, crd: str) -> str | None:
        found = self.releases[index].crds.get(crd)
        return None if found is None else found.storage_version

    def versions(self, index: int, crd: str) -> list[str]:
        found = self.releases[index].crds.get(crd)
        return [] if found is None else list(found.versions)

    def tier(self, crd: str, version: str) -> Tier:
        return self.settings.tier_overrides.get((crd, version)) or tier_from_name(version)

    def tier_policy(self, crd: str, version: str) -> TierPolicy:
        return self.settings.tiers[self.tier(crd, version)]

    def run_start(self, end: int, holds: Callable[[int], bool]) -> int | None:
        """The first index of the unbroken run of releases ending at end where holds(index)
        is true; None when it does not hold at end."""
        if end < 0 or not holds(end):
            return None
        start = end
        while start > 0 and holds(start - 1):
            start -= 1
        return start

    def window_holds(self, window: Window, start: int, end: int) -> bool:
        return end - start >= window.releases and self.releases[end].date >= window.ends(
            self.releases[start].date
        )

    def transitions(self) -> Iterator[tuple[int, str, str]]:
        """(index, crd, version) for every version present at index or the release before."""
        for index in range(1, len(self.releases)):
            for crd in self.crd_names:
                names = dict.fromkeys(self.versions(index - 1, crd) + self.versions(index, crd))
                for version in names:
                    yield index, crd, version

    def stopped_serving(self, index: int, crd: str, version: str) -> bool:
        return self.served(index - 1, crd, version) and not self.served(index, crd, version)

    def ends_of_service(self) -> Iterator[tuple[int, str, str, Window, int | None]]:
        """(index, crd, version, its tier's deprecation window, the first release of the
        unbroken run marking it deprecated up to index - 1, or None) for every version that
        stops being served at index, when its tier has a window."""
        for index, crd, version in self.transitions():
            window = self.tier_policy(crd, version).deprecation
            if window.empty or not self.stopped_serving(index, crd, version):
                continue
            marked = self.run_start(index - 1, partial(self.deprecated, crd=crd, version=version))
            yield index, crd, version, window, marked

    def state(self, index: int, crd: str, version: str) -> str:
        entry = self.entry(index, crd, version)
        if entry is None:
            return "absent" if crd not in self.releases[index].crds else "removed"
        words = ["served" if entry.get("served") else "not served"]
        if entry.get("deprecated") is True:
            words.append("deprecated")
        if self.storage(index, crd) == version:
            words.append("storage")
        return ", ".join(words)

    def timeline(self, crd: str, version: str) -> str:
        """Every change of the version's state, one release each: a finding's note."""
        steps: list[str] = []
        previous = None
        for index, release in enumerate(self.releases):
            state = self.state(index, crd, version)
            if state != previous and not (previous is None and state == "absent"):
                steps.append(f"{release}: {state}")
            previous = state
        return f"timeline of {version} ({self.tier(crd, version)}): " + "; ".join(steps)
