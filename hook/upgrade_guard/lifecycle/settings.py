"""The policy's ``lifecycle:`` section: tiers, windows, tier overrides, declarations.

lifecycle:
  tiers:                         # each key overrides Kubernetes' default for that tier
    stable:
      breaking-changes: refuse   # refuse | declare | allow: a break inside a served version
      deprecation: {releases: 3, months: 12}         # deprecated this long before unserved
      served-before-storage: {releases: 1}           # served this long before it is storage
    beta:  {breaking-changes: refuse, deprecation: {releases: 3, months: 9}}
    alpha: {breaking-changes: declare, deprecation: {releases: 0}}
  tier-overrides:                # a version whose name says one tier but is another
    - {crd: widgets.example.com, version: v1, tier: beta}
  breaks:                        # a release breaking an alpha (declare) version on purpose
    - {crd: widgets.example.com, version: v1alpha1, release: v0.4.0, reason: "..."}
  storage-migrations:            # storedVersions no longer holds the version from this release
    - {crd: widgets.example.com, version: v1alpha1, release: v0.6.0, reason: "..."}

A window holds only when both parts hold: ``releases`` (release tags between the two
events) and the time (``months`` plus ``days``) between their dates.
"""

from __future__ import annotations

import calendar
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any


class Tier(enum.IntEnum):
    """Stability, least stable first (Kubernetes' version priority: GA > beta > alpha)."""

    ALPHA = 1
    BETA = 2
    STABLE = 3

    def __str__(self) -> str:
        return self.name.lower()


class BreakingChanges(enum.StrEnum):
    REFUSE = "refuse"
    DECLARE = "declare"
    ALLOW = "allow"


@dataclass(frozen=True)
class Window:
    """At least ``releases`` releases and ``months`` plus ``days`` of time."""

    releases: int = 0
    months: int = 0
    days: int = 0

    @property
    def empty(self) -> bool:
        return self.releases == 0 and self.months == 0 and self.days == 0

    def ends(self, start: datetime) -> datetime:
        """The first moment the time part of the window has passed since start."""
        month_index = start.month - 1 + self.months
        year = start.year + month_index // 12
        month = month_index % 12 + 1
        day = min(start.day, calendar.monthrange(year, month)[1])
        return start.replace(year=year, month=month, day=day) + timedelta(days=self.days)

    def __str__(self) -> str:
        parts = [f"{self.releases} release{'' if self.releases == 1 else 's'}"]
        if self.months:
            parts.append(f"{self.months} month{'' if self.months == 1 else 's'}")
        if self.days:
            parts.append(f"{self.days} day{'' if self.days == 1 else 's'}")
        return " and ".join(parts)


@dataclass(frozen=True)
class TierPolicy:
    breaking_changes: BreakingChanges
    deprecation: Window
    served_before_storage: Window


@dataclass(frozen=True)
class Declaration:
    """A lifecycle break or storage migration: one CRD version, one release, and why."""

    crd: str
    version: str
    release: str
    reason: str


# Kubernetes' deprecation policy: GA 12 months or 3 releases, beta 9 months or 3 releases
# (whichever is longer), alpha none; beta and GA never break within a version; rule 4b: the
# storage version advances only after a release served both.
KUBERNETES_TIERS: Mapping[Tier, TierPolicy] = {
    Tier.STABLE: TierPolicy(BreakingChanges.REFUSE, Window(3, 12), Window(1)),
    Tier.BETA: TierPolicy(BreakingChanges.REFUSE, Window(3, 9), Window(1)),
    Tier.ALPHA: TierPolicy(BreakingChanges.DECLARE, Window(), Window(1)),
}


@dataclass(frozen=True)
class LifecycleSettings:
    tiers: Mapping[Tier, TierPolicy] = field(default_factory=lambda: dict(KUBERNETES_TIERS))
    tier_overrides: Mapping[tuple[str, str], Tier] = field(default_factory=dict)
    breaks: tuple[Declaration, ...] = ()
    storage_migrations: tuple[Declaration, ...] = ()


DEFAULT_LIFECYCLE = LifecycleSettings()


def _window(entry: Mapping[str, int]) -> Window:
    return Window(entry.get("releases", 0), entry.get("months", 0), entry.get("days", 0))


def _tier_policy(entry: Mapping[str, Any], default: TierPolicy) -> TierPolicy:
    chosen = default
    if "breaking-changes" in entry:
        chosen = replace(chosen, breaking_changes=BreakingChanges(entry["breaking-changes"]))
    if "deprecation" in entry:
        chosen = replace(chosen, deprecation=_window(entry["deprecation"]))
    if "served-before-storage" in entry:
        chosen = replace(chosen, served_before_storage=_window(entry["served-before-storage"]))
    return chosen


def _declaration(entry: Mapping[str, str]) -> Declaration:
    return Declaration(entry["crd"], entry["version"], entry["release"], entry["reason"])


_TIERS = {str(tier): tier for tier in Tier}


def parse_lifecycle(section: Mapping[str, Any] | None) -> LifecycleSettings:
    """The ``lifecycle:`` section (None: Kubernetes' defaults), already checked against the
    policy's JSON Schema (policy_schema.py)."""
    if section is None:
        return DEFAULT_LIFECYCLE
    tiers = dict(KUBERNETES_TIERS)
    for word, entry in (section.get("tiers") or {}).items():
        tiers[_TIERS[word]] = _tier_policy(entry, tiers[_TIERS[word]])
    return LifecycleSettings(
        tiers=tiers,
        tier_overrides={
            (entry["crd"], entry["version"]): _TIERS[entry["tier"]]
            for entry in section.get("tier-overrides") or []
        },
        breaks=tuple(_declaration(entry) for entry in section.get("breaks") or []),
        storage_migrations=tuple(
            _declaration(entry) for entry in section.get("storage-migrations") or []
        ),
    )
