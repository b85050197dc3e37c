"""A small, thread-safe JSON REST client for the test control plane.

The project's tests use the official ``kubernetes`` client too; this one exists so the
test environment itself (readiness, RBAC setup, the Job runner, the CRD checks) depends
only on raw API paths and JSON, and so a refused write is a value to assert on
(:class:`KubeError` carries the HTTP code and the apiserver's ``Status`` message).
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import urllib3

JSON = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON


def objects_of(documents: Iterable[Any]) -> list[JSON]:
    """The objects of parsed YAML documents as the apiserver gets them: a List's items each
    (helm and kubectl create them one by one; Argo CD unpacks a List before it syncs)."""
    found: list[JSON] = []
    for document in documents:
        if document:
            found.extend(document["items"] if document.get("kind") == "List" else [document])
    return found


_RETRIES_OF_429 = 10  # client-go's maxRetries


class KubeError(Exception):
    """A non-2xx answer of the apiserver."""

    def __init__(self, method: str, path: str, code: int, body: JSON | str) -> None:
        self.method = method
        self.path = path
        self.code = code
        self.body = body
        self.status: JSON = body if isinstance(body, dict) else {}
        self.message: str = str(self.status.get("message", body))
        self.reason: str = str(self.status.get("reason", ""))
        super().__init__(f"{method} {path}: HTTP {code} {self.reason}: {self.message}")

    @property
    def causes(self) -> list[JSON]:
        details = self.status.get("details") or {}
        return list(details.get("causes") or [])


@dataclass
class Kube:
    """Client for one identity (bearer token) against one apiserver."""

    server: str
    token: str
    ca_file: Path
    timeout: float = 30.0
    _pool: urllib3.PoolManager = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        self._pool = urllib3.PoolManager(maxsize=8, ssl_context=ctx, retries=False)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, str | int | bool] | None = None,
        content_type: str = "application/json",
        raw: bool = False,
    ) -> Any:
        """Send one request; return the decoded JSON (or text when ``raw``)."""
        url = self.server + path
        if query:
            url += "?" + urlencode(
                {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in query.items()}
            )
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data: bytes | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        resp = self._send(method, url, data, headers)
        text = resp.data.decode("utf-8", "replace")
        if resp.status >= 300:
            try:
                decoded: JSON | str = json.loads(text)
            except ValueError:
                decoded = text
            raise KubeError(method, path, resp.status, decoded)
        if raw:
            return text
        return json.loads(text) if text else None

    def _send(
        self, method: str, url: str, data: bytes | None, headers: dict[str, str]
    ) -> urllib3.BaseHTTPResponse:
        """One answer, after waiting out 429s as client-go does (at most 10 retries, each
        after the server's Retry-After): right after a CRD changes, its resource's storage
        answers "storage is (re)initializing" for a moment."""

        def send() -> urllib3.BaseHTTPResponse:
            return self._pool.request(
                method, url, body=data, headers=headers, timeout=self.timeout, preload_content=True
            )

        resp = send()
        for _ in range(_RETRIES_OF_429):
            if resp.status != 429:
                break
            retry_after = resp.headers.get("Retry-After", "")
            time.sleep(int(retry_after) if retry_after.isdigit() else 1)
            resp = send()
        return resp

    # Convenience verbs -------------------------------------------------------------------
    def get(self, path: str, **query: str | int | bool) -> Any:
        return self.request("GET", path, query=query or None)

    def get_or_none(self, path: str) -> Any:
        try:
            return self.get(path)
        except KubeError as err:
            if err.code == 404:
                return None
            raise

    def create(self, path: str, body: JSON, **query: str | int | bool) -> Any:
        return self.request("POST", path, body, query=query or None)

    def replace(self, path: str, body: JSON, **query: str | int | bool) -> Any:
        return self.request("PUT", path, body, query=query or None)

    def patch(
        self, path: str, body: Any, content_type: str = MERGE_PATCH, **query: str | int | bool
    ) -> Any:
        return self.request("PATCH", path, body, content_type=content_type, query=query or None)

    def apply(self, path: str, body: JSON, manager: str, *, force: bool = False) -> Any:
        """A server-side apply of ``body`` (the object's path) as field manager ``manager``."""
        query: dict[str, str | int | bool] = {"fieldManager": manager}
        if force:
            query["force"] = True
        return self.patch(path, body, APPLY_PATCH, **query)

    def delete(self, path: str, body: JSON | None = None, *, missing_ok: bool = True) -> Any:
        try:
            return self.request("DELETE", path, body)
        except KubeError as err:
            if missing_ok and err.code == 404:
                return None
            raise

    def ensure(self, collection_path: str, body: JSON) -> Any:
        """Create ``body`` in ``collection_path`` unless an object of that name exists."""
        try:
            return self.create(collection_path, body)
        except KubeError as err:
            if err.code != 409:
                raise
            return self.get(f"{collection_path}/{quote(body['metadata']['name'])}")

    def ensure_namespace(self, name: str) -> Any:
        return self.ensure(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )


def wait_for(
    check: Callable[[], Any], *, timeout: float = 30.0, interval: float = 0.1, what: str = ""
) -> Any:
    """Call ``check`` until it returns something truthy; return that or raise TimeoutError.

    Exceptions raised by ``check`` count as "not yet"; the last one is chained on timeout.
    """
    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    while True:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:
            last_exc = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what or check}") from (
                last_exc
            )
        time.sleep(interval)


def create_when_served(kube: Kube, path: str, body: JSON, timeout: float = 30.0) -> JSON:
    """``body`` created at ``path`` once the apiserver serves it: helm returns once it has
    applied a CRD, and the resource's handler answers 404 for a moment after."""

    def created() -> JSON | None:
        try:
            result: JSON = kube.create(path, body)
        except KubeError as error:
            if error.code == 404:
                return None
            raise
        return result

    return wait_for(created, timeout=timeout, what=f"{path} served")


def api_path(
    api_version: str, plural: str, namespace: str | None = None, name: str | None = None
) -> str:
    """REST path of a collection or object: ``api_path("batch/v1", "jobs", "ns", "x")``."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{quote(namespace)}"
    base += f"/{plural}"
    if name:
        base += f"/{quote(name)}"
    return base
