"""Controller-state versions that stored objects hold, read page by page across namespaces.

Only the value at the policy's path is kept, with the object's namespace and name: never
any other part of an object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from upgrade_guard.cluster.client import Api, ClusterError, Resource
from upgrade_guard.counters.live import WrittenState
from upgrade_guard.crd import Crd
from upgrade_guard.policy import StoredState, canonical_number


def _collection(location: StoredState, live: Mapping[str, Crd]) -> str | None:
    """The list path for location, or None when its CRD does not exist (nothing stored)."""
    version = location.version
    if version is None:
        crd = live.get(location.resource)
        if crd is None:
            return None
        version = crd.storage_version
    if version is None:
        return None
    plural = quote(location.plural, safe="")
    if not location.group:
        return f"/api/{quote(version, safe='')}/{plural}"
    return f"/apis/{quote(location.group, safe='')}/{quote(version, safe='')}/{plural}"


def _value_at(item: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(item, Mapping):
            return None
        item = item.get(part)
    return item


def read_written_state(
    api: Api, locations: tuple[StoredState, ...], live: Mapping[str, Crd]
) -> list[WrittenState]:
    """Each stored object's state version at each location; objects without one are skipped,
    one holding something other than a canonical positive decimal is an error."""
    found: list[WrittenState] = []
    for location in locations:
        collection = _collection(location, live)
        if collection is None:
            continue
        what = Resource("list", location.resource)
        dotted = ".".join(location.path)
        for item in api.list_all(collection, what):
            metadata = item.get("metadata") or {}
            holder = "/".join(p for p in (metadata.get("namespace"), metadata.get("name")) if p)
            value = _value_at(item, location.path)
            if value is None:
                continue
            number = canonical_number(value)
            if number is None:
                raise ClusterError(
                    f"{location.resource} {holder}: {dotted} is not a canonical positive"
                    " decimal, so the state version it holds cannot be read"
                )
            found.append(WrittenState(number, f"{location.resource} {holder} ({dotted})"))
    return found
