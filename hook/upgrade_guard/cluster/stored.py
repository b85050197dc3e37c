"""Stored objects of a CRD, listed page by page across namespaces for evidence.

The objects are handed on one at a time and not kept. Listing stops at a limit per
resource, and a failure (a missing ``list`` permission, the deadline) ends it with a
reason instead of failing the hook: without evidence a finding simply stays as it is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from upgrade_guard.cluster.client import Api, ClusterError, Resource, load_configuration
from upgrade_guard.crd import Crd


class StoredListing:
    def __init__(self, api: Api, crd: Crd, limit: int) -> None:
        self._api = api
        self._crd = crd
        self._limit = limit
        self.complete = True
        self.problem: str | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        version = self._crd.storage_version
        group = str(self._crd.spec.get("group", ""))
        plural = str(self._crd.names.get("plural", ""))
        if version is None or not group or not plural:
            self.problem = "the live CRD names no storage version"
            return
        path = f"/apis/{quote(group, safe='')}/{quote(version, safe='')}/{quote(plural, safe='')}"
        seen = 0
        try:
            for item in self._api.list_all(path, Resource("list", f"{plural}.{group}")):
                if seen == self._limit:
                    self.complete = False
                    return
                seen += 1
                yield item
        except ClusterError as error:
            self.problem = f"cannot list the stored {plural}: {error}"


@contextmanager
def stored_objects(
    *, kubeconfig: str | None, context: str | None, deadline: float, limit: int
) -> Iterator[Callable[[Crd], StoredListing]]:
    """A lister of stored objects (at most ``limit`` per CRD) inside ``deadline``."""
    api = Api(load_configuration(kubeconfig, context), deadline)
    try:
        yield lambda crd: StoredListing(api, crd, limit)
    finally:
        api.close()
