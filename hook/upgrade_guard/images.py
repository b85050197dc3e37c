"""Image references and the chart's image table: which controller image compiles which
counters, by tag or digest."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

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
