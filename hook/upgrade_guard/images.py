"""Image references and the chart's image table: which controller image compiles which
counters, by tag or digest; and one image the values deploy, paired with the chart."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

# The note a pairing refusal carries: the helm flags that deploy the paired image.
DEPLOY_WITH = "deploy with: "
_DIGEST_REF = re.compile(r"@(sha256:[0-9a-f]{64})\Z")
_TAG = re.compile(r":([\w][\w.-]{0,127})\Z")


@dataclass(frozen=True)
class ImageTable:
    """Which controller image compiles which counters, by tag or digest (``sha256:...``)."""

    source: str
    images: Mapping[str, Mapping[str, int]]

    def entry_for(self, reference: str) -> tuple[str, Mapping[str, int]] | None:
        """The key (digest first, then tag) and counters the table has for an image."""
        for key in image_keys(reference):
            if key in self.images:
                return key, self.images[key]
        return None

    def keys_with(self, counters: Mapping[str, int]) -> list[str]:
        """The table's tags and digests whose counters include these."""
        return sorted(
            key
            for key, known in self.images.items()
            if all(known.get(name) == value for name, value in counters.items())
        )


def image_keys(reference: str) -> list[str]:
    """An image reference's digest and tag, in the order the table is searched:
    ``repo:1.2@sha256:...`` gives the digest and ``1.2``; ``repo`` alone gives ``latest``."""
    keys: list[str] = []
    rest = reference.strip()
    found = _DIGEST_REF.search(rest)
    if found:
        keys.append(found.group(1))
        rest = rest[: found.start()]
    last = rest.rsplit("/", 1)[-1]
    tag = _TAG.search(last)
    if tag:
        keys.append(tag.group(1))
    elif not found:
        keys.append("latest")
    return keys


@dataclass(frozen=True)
class SlotPairing:
    """The image the values deploy in one slot (``image``, ``webhook.image``, ...) against
    the counters the chart declares paired with its images (``wanted``)."""

    slot: str
    image: str
    table: ImageTable
    wanted: Mapping[str, int]

    @cached_property
    def goes_with(self) -> list[str]:
        return self.table.keys_with(self.wanted)

    @property
    def needed(self) -> str:
        return ", ".join(f"{name} {value}" for name, value in sorted(self.wanted.items()))

    @property
    def hint(self) -> str:
        if self.goes_with:
            return f"this chart goes with image {' or '.join(self.goes_with)} ({self.needed})"
        return f"no image in the chart's table compiles {self.needed}"

    @cached_property
    def entry(self) -> tuple[str, Mapping[str, int]] | None:
        return self.table.entry_for(self.image)

    def pin(self) -> str:
        """The admin's way out: the values that deploy the paired image whatever kept the
        old one (a ``DEPLOY_WITH`` note; the report puts it in a command for what the admin ran).
        ``--reuse-values`` keeps the old chart's default, and a tag the admin pinned
        survives ``--reset-then-reuse-values`` too; ``--set SLOT.tag`` wins over both. A
        digest in the values wins over any tag, so it is set (or emptied) as well."""
        slot, image = self.slot, self.image
        tags = [key for key in self.goes_with if not key.startswith("sha256:")]
        digests = [key for key in self.goes_with if key.startswith("sha256:")]
        pinned_digest = bool(image_keys(image)[0].startswith("sha256:"))
        if digests and (pinned_digest or not tags):
            setting = f"--set {slot}.digest={digests[0]}"
        elif tags:
            setting = f"--set {slot}.tag={tags[0]}" + (
                f" --set {slot}.digest=" if pinned_digest else ""
            )
        else:
            return (
                f"now: no image in the chart's table compiles {self.needed}: keep the"
                f" release that goes with {image}, or ask the chart's authors for the image"
            )
        return DEPLOY_WITH + setting
