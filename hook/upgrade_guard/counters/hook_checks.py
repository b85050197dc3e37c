"""The hook's checks of a chart against the live cluster, besides the engine's: their
subject made from what was read, and the run of every hook check over it.

Pure: the live side arrives already read. Three contracts, one rule each (``HookCheck``
modules under rules/), each refusal a change the one judge (``judging``) makes a finding of:

- chart and images belong together: the counters the chart declares as paired with its
  controller images (``controller-state-version`` always) equal those each image that the
  release's values deploy is known to compile, by the chart's own image table (one table,
  keyed by tag or digest, for every slot: the controller, a webhook, a cainjector, ...);
- the schema version does not go below the live CRDs' (a rollback below the written schema),
  and equal versions mean equal specs;
- no state in the cluster was written at a newer controller-state version than this release
  reads (live CRD annotations, and stored objects at the paths the policy lists);
- no stored object carries a finalizer this release no longer handles, nor (a warning) a
  condition type it no longer declares: what the objects carry is tallied here
  (``CarriedTally``), from the listing the hook makes once per CRD for every such check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from upgrade_guard import engine, rules
from upgrade_guard.crd import Crd, canonical_number, stamped_number
from upgrade_guard.images import ImageTable
from upgrade_guard.judging import Changes, run
from upgrade_guard.policy import CONTROLLER_STATE_VERSION, SCHEMA_VERSION, Policy, StoredState
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import Carried, HookSubject, Stored, WrittenState

_HOOK_CHECKS = rules.of_kind(HookCheck)

# The slot of an image passed without a name: the chart's `image` values.
DEFAULT_SLOT = "image"


SHOWN_HOLDERS = 5  # names kept for each finalizer or condition type


class CarriedTally:
    """The finalizers and condition types one CRD's stored objects carry, tallied object by
    object (names and counts only: nothing of an object is kept)."""

    def __init__(self) -> None:
        self.checked = 0
        self._finalizers: dict[str, list[str]] = {}
        self._types: dict[str, list[str]] = {}
        self._counts: dict[tuple[bool, str], int] = {}

    def add(self, obj: Mapping[str, Any]) -> None:
        self.checked += 1
        meta = obj.get("metadata") or {}
        holder = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
        conditions = (obj.get("status") or {}).get("conditions")
        types = [c.get("type") for c in conditions or () if isinstance(c, Mapping)]
        for is_finalizer, names, found in (
            (True, self._finalizers, meta.get("finalizers") or ()),
            (False, self._types, types),
        ):
            for key in {k for k in found if isinstance(k, str)}:
                self._counts[is_finalizer, key] = self._counts.get((is_finalizer, key), 0) + 1
                shown = names.setdefault(key, [])
                if len(shown) < SHOWN_HOLDERS:
                    shown.append(holder)

    def carried(self, *, complete: bool, problem: str | None) -> Carried:
        return Carried(
            checked=self.checked,
            complete=complete,
            problem=problem,
            finalizers={
                k: Stored(self._counts[True, k], tuple(v)) for k, v in self._finalizers.items()
            },
            condition_types={
                k: Stored(self._counts[False, k], tuple(v)) for k, v in self._types.items()
            },
        )


def subject_for(
    policy: Policy,
    chart: Mapping[str, Crd],
    given_counters: Mapping[str, str],
    controller_images: Mapping[str, str],
    image_table: ImageTable | None,
) -> HookSubject:
    """What the hook's checks compare before the cluster is read, with the policy's names for
    what they read: the schema version's annotation, and the counters paired with the images
    (``controller-state-version`` always). ``given_counters``: values by annotation (the
    hook's --counter), else the value every chart CRD is stamped with."""
    names = {CONTROLLER_STATE_VERSION, *(c.name for c in policy.counters)}
    chart_counters: dict[str, int] = {}
    for name in sorted(names):
        key = policy.annotation(name)
        if key in given_counters:
            chart_counters[name] = int(given_counters[key])
            continue
        stamped = {stamped_number(crd, key) for crd in chart.values()}
        if len(stamped) == 1 and None not in stamped:
            chart_counters[name] = int(stamped.pop() or 0)
    return HookSubject(
        chart=chart,
        chart_counters=chart_counters,
        controller_images=controller_images,
        image_table=image_table,
        schema_key=policy.annotation(SCHEMA_VERSION),
        controllers=policy.controllers,
        paired=(
            CONTROLLER_STATE_VERSION,
            *(c.name for c in policy.counters if c.paired_with_image),
        ),
    )


NOTHING_COMPARED = Changes(())


def changes(subject: HookSubject, compared: Changes = NOTHING_COMPARED) -> Changes:
    """What the hook's checks find in subject, with compared: the schema comparison of the
    live CRDs with the chart's and the roles' (``compared_with_live``), made once however
    often the hook's own checks run (again once the stored objects are tallied)."""
    return replace(compared, raw=run(_HOOK_CHECKS, subject) + compared.raw)


def compared_with_live(subject: HookSubject, policy: Policy) -> Changes:
    """The live CRDs against the chart's, and the roles of the release against the replaced
    release's and the live ones."""
    return engine.changes_between(subject.live, subject.chart, policy).merged(
        engine.role_changes(subject.roles)
    )


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
