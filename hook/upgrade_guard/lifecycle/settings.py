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


class LifecycleError(ValueError):
    """A lifecycle section that cannot be used; the message names the file and the entry."""


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

_SECTION_KEYS = frozenset({"tiers", "tier-overrides", "breaks", "storage-migrations"})
_TIER_KEYS = frozenset({"breaking-changes", "deprecation", "served-before-storage"})
_WINDOW_KEYS = frozenset({"releases", "months", "days"})
_OVERRIDE_KEYS = frozenset({"crd", "version", "tier"})
_DECLARATION_KEYS = frozenset({"crd", "version", "release", "reason"})


def _mapping(value: Any, where: str, allowed: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise LifecycleError(f"{where}: must be a mapping of {', '.join(sorted(allowed))}")
    unknown = sorted(str(key) for key in set(value) - allowed)
    if unknown:
        raise LifecycleError(f"{where}: unknown key {unknown[0]!r}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise LifecycleError(f"{where}: must be a list")
    return value


def _tier(value: Any, where: str) -> Tier:
    words = {str(tier): tier for tier in Tier}
    if value not in words:
        raise LifecycleError(f"{where}: must be one of {', '.join(sorted(words))}")
    return words[value]


def _window(value: Any, where: str) -> Window:
    entry = _mapping(value, where, _WINDOW_KEYS)
    numbers: dict[str, int] = {}
    for key in _WINDOW_KEYS:
        number = entry.get(key, 0)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise LifecycleError(f"{where}.{key}: must be a whole number, 0 or more")
        numbers[key] = number
    return Window(numbers["releases"], numbers["months"], numbers["days"])


def _tier_policy(value: Any, where: str, default: TierPolicy) -> TierPolicy:
    entry = _mapping(value, where, _TIER_KEYS)
    chosen = default
    if "breaking-changes" in entry:
        word = entry["breaking-changes"]
        if word not in {str(choice) for choice in BreakingChanges}:
            raise LifecycleError(f"{where}.breaking-changes: must be refuse, declare or allow")
        chosen = replace(chosen, breaking_changes=BreakingChanges(word))
    if "deprecation" in entry:
        chosen = replace(chosen, deprecation=_window(entry["deprecation"], f"{where}.deprecation"))
    if "served-before-storage" in entry:
        window = _window(entry["served-before-storage"], f"{where}.served-before-storage")
        chosen = replace(chosen, served_before_storage=window)
    return chosen


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LifecycleError(f"{where}: {key} is required, a non-empty string")
    return value


def _declaration(value: Any, where: str) -> Declaration:
    entry = _mapping(value, where, _DECLARATION_KEYS)
    return Declaration(
        crd=_text(entry, "crd", where),
        version=_text(entry, "version", where),
        release=_text(entry, "release", where),
        reason=_text(entry, "reason", where),
    )


def parse_lifecycle(raw: Any, source: str) -> LifecycleSettings:
    """The ``lifecycle:`` section (None: Kubernetes' defaults), or LifecycleError."""
    if raw is None:
        return DEFAULT_LIFECYCLE
    where = f"{source}: lifecycle"
    section = _mapping(raw, where, _SECTION_KEYS)
    tiers = dict(KUBERNETES_TIERS)
    tier_section = section.get("tiers") or {}
    if not isinstance(tier_section, Mapping):
        raise LifecycleError(f"{where}.tiers: must be a mapping of stable, beta, alpha")
    for key, value in tier_section.items():
        tier = _tier(key, f"{where}.tiers.{key}")
        tiers[tier] = _tier_policy(value, f"{where}.tiers.{key}", tiers[tier])
    overrides: dict[tuple[str, str], Tier] = {}
    for index, value in enumerate(_list(section.get("tier-overrides"), f"{where}.tier-overrides")):
        at = f"{where}.tier-overrides[{index}]"
        entry = _mapping(value, at, _OVERRIDE_KEYS)
        overrides[(_text(entry, "crd", at), _text(entry, "version", at))] = _tier(
            entry.get("tier"), f"{at}.tier"
        )
    return LifecycleSettings(
        tiers=tiers,
        tier_overrides=overrides,
        breaks=tuple(
            _declaration(value, f"{where}.breaks[{index}]")
            for index, value in enumerate(_list(section.get("breaks"), f"{where}.breaks"))
        ),
        storage_migrations=tuple(
            _declaration(value, f"{where}.storage-migrations[{index}]")
            for index, value in enumerate(
                _list(section.get("storage-migrations"), f"{where}.storage-migrations")
            )
        ),
    )
