"""Stored objects of CRDs, listed page by page across namespaces for evidence.

The objects are handed on one at a time and not kept. Listing stops at a limit per
resource, and a failure (a missing ``list`` permission, the deadline) ends it with a
reason instead of failing the hook: without evidence a finding simply stays as it is.

A chart may have findings on hundreds of CRDs, most of them holding few objects or none, so
the first pages of the next few CRDs are requested while the current one is judged: the
hook waits on the apiserver once per window, not once per CRD."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple
from urllib.parse import quote

from upgrade_guard.cluster.client import PAGE, Api, ClusterError, Resource

_AHEAD = 8  # first pages in flight: at most this many pages of objects held at once


class StoredAt(NamedTuple):
    """Where a CRD's objects are listed: its group, its storage version (None where the CRD
    names none) and its plural."""

    group: str
    version: str | None
    plural: str


class StoredListing:
    def __init__(self, api: Api, where: StoredAt, limit: int) -> None:
        self._api = api
        self._limit = limit
        self.complete = True
        self.problem: str | None = None
        group, version, self._plural = where
        self._what = Resource("list", f"{self._plural}.{group}")
        self._path = ""
        if version is None or not group or not self._plural:
            self.problem = "the live CRD names no storage version"
        else:
            parts = (group, version, self._plural)
            self._path = "/apis/" + "/".join(quote(part, safe="") for part in parts)

    def first_page(self) -> Any:
        """The first page, or None after a failure (``problem`` then says what)."""
        if self.problem:
            return None
        try:
            return self._api.list_page(self._path, self._what, page=PAGE)
        except ClusterError as error:
            self.problem = f"cannot list the stored {self._plural}: {error}"
            return None

    def objects(self, first: Any) -> Iterator[dict[str, Any]]:
        seen = 0
        try:
            for item in self._api.list_rest(first, self._path, self._what, PAGE):
                if seen == self._limit:
                    self.complete = False
                    return
                seen += 1
                yield item
        except ClusterError as error:
            self.problem = f"cannot list the stored {self._plural}: {error}"


class _Prefetched:
    """A listing whose first page has been read: iterating it goes on from there."""

    def __init__(self, listing: StoredListing, first: Future[Any]) -> None:
        self._listing = listing
        self._first = first

    @property
    def complete(self) -> bool:
        return self._listing.complete

    @property
    def problem(self) -> str | None:
        return self._listing.problem

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._listing.objects(self._first.result())


def stored_objects(api: Api, crds: Iterable[StoredAt], limit: int) -> Iterator[_Prefetched]:
    """The listings of stored objects (at most ``limit`` per CRD), given where CRDs store
    them, in the same order."""
    with ThreadPoolExecutor(max_workers=_AHEAD) as pool:
        pending: deque[_Prefetched] = deque()
        for where in crds:
            listing = StoredListing(api, where, limit)
            pending.append(_Prefetched(listing, pool.submit(listing.first_page)))
            if len(pending) > _AHEAD:
                yield pending.popleft()
        yield from pending
