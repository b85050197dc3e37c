"""What the hook's checks compare: the chart against the cluster, typed, built by the layers
above (the command reads, ``counters.live`` makes sense of the reads) and read by the rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from upgrade_guard.crd import (
    CONTROLLER_STATE_VERSION,
    DEFAULT_ANNOTATION_PREFIX,
    SCHEMA_VERSION,
    Crd,
)
from upgrade_guard.images import ImageTable, SlotPairing


@dataclass(frozen=True)
class WrittenState:
    """A controller-state version found in the cluster, and where (never the object's data)."""

    version: int
    holder: str


@dataclass(frozen=True)
class Stored:
    """How many objects a CRD stores, and the first few names (never their data)."""

    count: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class HookSubject:
    """The chart's CRDs and the live ones (both normalized as the digest sees them, so equal
    specs mean equal digests; none before the cluster is read), the counters the chart
    declares, each slot's image the release's values deploy with the chart's image table,
    and the state written in the cluster. ``schema_key`` is the annotation of the schema
    version and ``paired`` the counters paired with the images, as the policy names them."""

    chart: Mapping[str, Crd] = field(default_factory=dict)
    live: Mapping[str, Crd] = field(default_factory=dict)
    chart_counters: Mapping[str, int] = field(default_factory=dict)
    controller_images: Mapping[str, str] = field(default_factory=dict)
    image_table: ImageTable | None = None
    written_state: Sequence[WrittenState] = ()
    schema_key: str = DEFAULT_ANNOTATION_PREFIX + SCHEMA_VERSION
    paired: tuple[str, ...] = (CONTROLLER_STATE_VERSION,)
    # Under Helm, from its release records: the release this one replaces (described), whether
    # it ran the guard already, the CRDs it applied that this one does not (each with its live
    # object, None when gone) and the objects stored in each of those.
    replaced: str = ""
    adopted: bool = False
    dropped: Mapping[str, Crd | None] = field(default_factory=dict)
    stored: Mapping[str, Stored] = field(default_factory=dict)

    def pairings(self) -> list[SlotPairing]:
        """Each slot's image against the paired counters the chart declares."""
        wanted = {n: v for n in self.paired if (v := self.chart_counters.get(n))}
        if self.image_table is None or not wanted:
            return []
        return [
            SlotPairing(slot, image, self.image_table, wanted)
            for slot, image in sorted(self.controller_images.items())
        ]

    def both(self) -> list[tuple[str, Crd, Crd]]:
        """Each CRD the chart and the cluster both have: name, chart's, live."""
        return [
            (name, self.chart[name], self.live[name])
            for name in sorted(self.chart.keys() & self.live.keys())
        ]
