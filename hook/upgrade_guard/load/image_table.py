"""Read the chart's image table (which controller image compiles which counters)."""

from __future__ import annotations

from upgrade_guard.counters.live import ImageTable, parse_image_table
from upgrade_guard.load.documents import LoadError, load_documents


def read_image_table(path: str) -> ImageTable:
    documents = list(load_documents(path))
    if len(documents) != 1:
        raise LoadError(f"{path}: an image table is exactly one YAML or JSON document")
    return parse_image_table(documents[0].body, path)
