"""Values that stored objects hold at one path, read page by page across namespaces.

Only the value at the path is kept, with the object's namespace and name: never any other
part of an object."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

from upgrade_guard.cluster.client import Api, Resource


def _value_at(item: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(item, Mapping):
            return None
        item = item.get(part)
    return item


def values_at(
    api: Api, group: str, version: str, plural: str, path: tuple[str, ...]
) -> Iterator[tuple[str, Any]]:
    """Each stored object's namespace/name and its value at path; objects without one are
    skipped."""
    plural_part, version_part = quote(plural, safe=""), quote(version, safe="")
    if group:
        collection = f"/apis/{quote(group, safe='')}/{version_part}/{plural_part}"
    else:
        collection = f"/api/{version_part}/{plural_part}"
    what = Resource("list", f"{plural}.{group}" if group else plural)
    for item in api.list_all(collection, what):
        metadata = item.get("metadata") or {}
        holder = "/".join(p for p in (metadata.get("namespace"), metadata.get("name")) if p)
        value = _value_at(item, path)
        if value is not None:
            yield holder, value
