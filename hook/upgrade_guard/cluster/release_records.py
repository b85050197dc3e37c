"""Helm's release records and the objects a CRD stores, read raw: a record Secret by name
(the hook may `get` these Secrets only), and an object count with the first few names (never
the objects' data)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from upgrade_guard.cluster.client import Api, Resource


def release_secret(api: Api, namespace: str, name: str) -> Any:
    """The Secret's body, or None when there is none."""
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/secrets/{quote(name, safe='')}"
    return api.get(path, Resource("get", "secrets", f"{namespace}/{name}"))


def stored_names(
    api: Api, group: str, version: str, plural: str, shown: int
) -> tuple[int, tuple[str, ...]]:
    """How many objects a resource holds across namespaces, and the first ``shown`` names
    (namespace/name)."""
    path = f"/apis/{quote(group, safe='')}/{quote(version, safe='')}/{quote(plural, safe='')}"
    count, names = 0, list[str]()
    for item in api.list_all(path, Resource("list", f"{plural}.{group}")):
        count += 1
        if len(names) < shown:
            metadata = item.get("metadata") or {}
            names.append(
                "/".join(p for p in (metadata.get("namespace"), metadata.get("name")) if p)
            )
    return count, tuple(names)
