"""Read the chart's image table (which controller image compiles which counters)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from upgrade_guard.images import ImageTable
from upgrade_guard.load.documents import LoadError, load_documents
from upgrade_guard.policy import PolicyError, canonical_number


def read_image_table(path: str) -> ImageTable:
    documents = list(load_documents(path))
    if len(documents) != 1:
        raise LoadError(f"{path}: an image table is exactly one YAML or JSON document")
    return parse_image_table(documents[0].body, path)


def parse_image_table(raw: Any, source: str) -> ImageTable:
    """``images: {TAG-or-DIGEST: {COUNTER: N, ...}, ...}``; refuses anything else."""
    images = raw.get("images") if isinstance(raw, Mapping) else None
    if not isinstance(raw, Mapping) or set(raw) != {"images"} or not isinstance(images, Mapping):
        raise PolicyError(f"{source}: an image table is a mapping with one key, images")
    table: dict[str, dict[str, int]] = {}
    for key, counters in images.items():
        where = f"{source}: images.{key}"
        if not isinstance(counters, Mapping) or not counters:
            raise PolicyError(f"{where}: expected a mapping of counter name to value")
        parsed: dict[str, int] = {}
        for name, value in counters.items():
            number = canonical_number(value)
            if number is None:
                raise PolicyError(f"{where}.{name}: expected a canonical positive decimal")
            parsed[str(name)] = number
        table[str(key)] = parsed
    if not table:
        raise PolicyError(f"{source}: images is empty")
    return ImageTable(source, table)
