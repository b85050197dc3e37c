"""The hook's judgement of a chart against the live cluster, besides the engine's.

Pure: the live side arrives already read. Three contracts, each refusal a change the one
judge (``judging``) makes a finding of:

- chart and images belong together: the counters the chart declares as paired with its
  controller images (``controller-state-version`` always) equal those each image that the
  release's values deploy is known to compile, by the chart's own image table (one table,
  keyed by tag or digest, for every slot: the controller, a webhook, a cainjector, ...);
- the schema version does not go below the live CRDs' (a rollback below the written schema),
  and equal versions mean equal specs;
- no state in the cluster was written at a newer controller-state version than this release
  reads (live CRD annotations, and stored objects at the paths the policy lists).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from upgrade_guard.counters.history import annotations_of, stamped_number
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change
from upgrade_guard.images import ImageTable, image_keys
from upgrade_guard.judging import Placed
from upgrade_guard.policy import (
    CONTROLLER_STATE_VERSION,
    SCHEMA_VERSION,
    Policy,
    StoredState,
    canonical_number,
)
from upgrade_guard.rules import (
    already_applied,
    first_adoption,
    image_mismatch,
    image_unknown,
    schema_below_live,
    schema_version_collision,
    state_below_written,
)
from upgrade_guard.rules.base import HookCheck

ALL_CRDS = "(all CRDs)"
SHOWN_NAMES = 5


@dataclass(frozen=True)
class WrittenState:
    """A controller-state version found in the cluster, and where (never the object's data)."""

    version: int
    holder: str


# The slot of an image passed without a name: the chart's `image` values.
DEFAULT_SLOT = "image"


@dataclass(frozen=True)
class LiveFacts:
    """What the hook read besides the CRDs themselves. ``controller_images``: each slot (the
    values key that sets that image, ``image``, ``webhook.image``, ...) and the image the
    release's values deploy there."""

    chart_counters: Mapping[str, int]
    controller_images: Mapping[str, str] = field(default_factory=dict)
    image_table: ImageTable | None = None
    written_state: Sequence[WrittenState] = ()


def _finding(
    rule: HookCheck,
    message: str,
    crd: str = ALL_CRDS,
    old: Any = None,
    new: Any = None,
    notes: tuple[str, ...] = (),
) -> Placed:
    return Placed(rule, crd, None, None, Change(None, message, old, new, notes=notes))


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def paired_counters(policy: Policy) -> tuple[str, ...]:
    return (CONTROLLER_STATE_VERSION, *(c.name for c in policy.counters if c.paired_with_image))


def pairing_changes(facts: LiveFacts, policy: Policy) -> list[Placed]:
    """Each image the values deploy against the counters the chart declares."""
    wanted = {n: v for n in paired_counters(policy) if (v := facts.chart_counters.get(n))}
    if facts.image_table is None or not wanted:
        return []
    changes = (
        _slot_change(slot, image, facts.image_table, wanted)
        for slot, image in sorted(facts.controller_images.items())
    )
    return [change for change in changes if change is not None]


def _slot_change(
    slot: str, image: str, table: ImageTable, wanted: Mapping[str, int]
) -> Placed | None:
    goes_with = table.keys_with(wanted)
    needed = ", ".join(f"{name} {value}" for name, value in sorted(wanted.items()))
    hint = (
        f"this chart goes with image {' or '.join(goes_with)} ({needed})"
        if goes_with
        else f"no image in the chart's table compiles {needed}"
    )
    entry = table.entry_for(image)
    if entry is None:
        return _finding(
            image_unknown.RULE,
            f"{slot}: the values deploy {image}, which the chart's image table"
            f" ({table.source}) does not list; {hint}",
            new=image,
            notes=(_pin(slot, image, goes_with, needed), f"author: add {image} to {table.source}"),
        )
    key, compiled = entry
    wrong = {n: compiled.get(n) for n, v in wanted.items() if compiled.get(n) != v}
    if not wrong:
        return None
    has = ", ".join(f"{n} {v if v is not None else 'none'}" for n, v in sorted(wrong.items()))
    return _finding(
        image_mismatch.RULE,
        f"{slot}: the values deploy {image} ({key}: {has}), but {hint}",
        old=dict(compiled),
        new=dict(wanted),
        notes=(
            _pin(slot, image, goes_with, needed),
            f"author: pair the chart's counters with the images it deploys in {table.source}",
        ),
    )


def _pin(slot: str, image: str, goes_with: Sequence[str], needed: str) -> str:
    """The admin's way out: a command that deploys the paired image whatever kept the old one.
    ``--reuse-values`` keeps the old chart's default, and a tag the admin pinned survives
    ``--reset-then-reuse-values`` too; ``--set SLOT.tag`` wins over both. A digest in the
    values wins over any tag, so it is set (or emptied) as well."""
    tags = [key for key in goes_with if not key.startswith("sha256:")]
    digests = [key for key in goes_with if key.startswith("sha256:")]
    pinned_digest = bool(image_keys(image)[0].startswith("sha256:"))
    if digests and (pinned_digest or not tags):
        setting = f"--set {slot}.digest={digests[0]}"
    elif tags:
        setting = f"--set {slot}.tag={tags[0]}" + (
            f" --set {slot}.digest=" if pinned_digest else ""
        )
    else:
        return (
            f"way out: no image in the chart's table compiles {needed}: keep the release that"
            f" goes with {image}, or ask the chart's authors for the image"
        )
    return (
        f"way out: helm upgrade RELEASE CHART --reuse-values {setting} (deploys the image that"
        " goes with this chart whether --reuse-values or your own setting kept the old one;"
        " --reset-then-reuse-values alone keeps an image you set: `helm get values RELEASE`"
        " shows them), or install the chart that goes with the deployed image"
    )


def schema_changes(
    chart: Mapping[str, Crd], live: Mapping[str, Crd], policy: Policy
) -> list[Placed]:
    """Schema version and spec of each chart CRD against its live counterpart. Both sides
    arrive normalized (``history.normalized``), so equal specs mean equal digests."""
    key = policy.annotation(SCHEMA_VERSION)
    findings: list[Placed] = []
    unversioned: list[str] = []
    applied: list[str] = []
    for name in sorted(chart.keys() & live.keys()):
        ours, theirs = chart[name], live[name]
        mine, live_version = stamped_number(ours, key), stamped_number(theirs, key)
        same_spec = ours.spec == theirs.spec
        if same_spec:
            applied.append(name)
        if live_version is None:
            if key not in annotations_of(theirs):
                unversioned.append(name)
            continue
        if mine is None:
            continue
        if live_version > mine:
            findings.append(
                _finding(
                    schema_below_live.RULE,
                    f"the live CRD is at schema version {live_version}, the chart's at {mine}:"
                    " a newer release wrote this schema",
                    crd=name,
                    old=live_version,
                    new=mine,
                )
            )
        elif live_version == mine and not same_spec:
            findings.append(
                _finding(
                    schema_version_collision.RULE,
                    f"the live CRD and the chart both say schema version {mine} but their specs"
                    " differ: one of them was changed without a bump",
                    crd=name,
                )
            )
    if unversioned:
        findings.append(
            _finding(
                first_adoption.RULE,
                f"{len(unversioned)} live CRD(s) carry no {key} ({_listed(unversioned)}):"
                " compared by schema only, adopted by this release",
            )
        )
    if applied:
        findings.append(
            _finding(
                already_applied.RULE,
                f"{len(applied)} live CRD(s) already equal the chart's ({_listed(applied)}):"
                " nothing left to guard for these CRDs",
            )
        )
    return findings


def stored_state_version(location: StoredState, live: Mapping[str, Crd]) -> str | None:
    """The version to list location's objects at, or None when its CRD does not exist
    (nothing stored)."""
    if location.version is not None:
        return location.version
    crd = live.get(location.resource)
    return None if crd is None else crd.storage_version


def written_in(location: StoredState, holder: str, value: Any) -> WrittenState | None:
    """The state version an object holds at location's path; None when the value is no
    canonical positive decimal."""
    number = canonical_number(value)
    if number is None:
        return None
    return WrittenState(number, f"{location.resource} {holder} ({'.'.join(location.path)})")


def live_state(live: Mapping[str, Crd], policy: Policy) -> list[WrittenState]:
    """The controller-state versions stamped on the live CRDs."""
    key = policy.annotation(CONTROLLER_STATE_VERSION)
    found = ((name, stamped_number(crd, key)) for name, crd in sorted(live.items()))
    return [WrittenState(v, f"CRD {name} ({key})") for name, v in found if v is not None]


def state_changes(facts: LiveFacts) -> list[Placed]:
    """State written at a newer controller-state version than this release reads."""
    reads = facts.chart_counters.get(CONTROLLER_STATE_VERSION)
    if reads is None:
        return []
    newer = sorted(
        (s for s in facts.written_state if s.version > reads), key=lambda s: (-s.version, s.holder)
    )
    if not newer:
        return []
    highest = newer[0].version
    return [
        _finding(
            state_below_written.RULE,
            f"{len(newer)} place(s) hold state written at controller-state-version up to"
            f" {highest}; this release reads {reads}: {_listed([s.holder for s in newer])}",
            old=highest,
            new=reads,
        )
    ]
