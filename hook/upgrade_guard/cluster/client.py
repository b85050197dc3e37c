"""Raw JSON reads from the apiserver inside one overall deadline.

Retries 429, 5xx, timeouts and refused connections with exponential backoff until the
deadline, never sooner than the apiserver's Retry-After (one past the deadline gives up at
once); every other failure is a ClusterError saying what was asked, of whom, and what the
apiserver answered. A 403 names the verb and resource the credentials lack. Nothing here is
written to the cluster.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
_FIRST_BACKOFF = 0.2
_MAX_BACKOFF = 5.0
_CONCURRENT_READS = 8


PAGE = 500  # items per list request


class ClusterError(RuntimeError):
    """The cluster could not be reached or read; the message says what and why (exit 3)."""


class Forbidden(ClusterError):
    """The credentials may not make a read (403)."""


@dataclass(frozen=True)
class Resource:
    """What a request reads, for messages: verb, resource (plural.group) and object name."""

    verb: str
    resource: str
    name: str | None = None

    def __str__(self) -> str:
        named = f" {self.name!r}" if self.name else ""
        return f"{self.verb} {self.resource}{named}"


def load_configuration(kubeconfig: str | None, context: str | None) -> Configuration:
    """The kubernetes client's standard loading: a kubeconfig when one is given or found
    (--kubeconfig, $KUBECONFIG, ~/.kube/config), else the Pod's in-cluster configuration."""
    configuration = Configuration()
    configuration.retries = False  # our own loop retries, inside the deadline
    default = Path(os.path.expanduser("~/.kube/config"))
    from_file = kubeconfig or context or os.environ.get("KUBECONFIG") or default.is_file()
    try:
        if from_file:
            kube_config.load_kube_config(
                config_file=kubeconfig,
                context=context,
                client_configuration=configuration,
                persist_config=False,  # never write to the kubeconfig we read
            )
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            kube_config.load_incluster_config(client_configuration=configuration)
        else:
            raise ClusterError(
                "no cluster configuration: give --kubeconfig, set KUBECONFIG, or run in a Pod"
            )
    except kube_config.ConfigException as error:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "in-cluster configuration"
        raise ClusterError(f"cannot load cluster configuration from {where}: {error}") from None
    except OSError as error:
        raise ClusterError(f"cannot read cluster configuration: {error}") from None
    configuration.connection_pool_maxsize = _CONCURRENT_READS
    return configuration


class Api:
    """One session with the cluster: GET requests returning parsed JSON, all inside one
    deadline (time.monotonic()), counted together. The configuration is loaded at the first
    request, so a run that ends before it reads the cluster needs none."""

    def __init__(self, kubeconfig: str | None, context: str | None, deadline: float) -> None:
        self._kubeconfig, self._context = kubeconfig, context
        self._client: ApiClient | None = None
        self._host = ""
        self._connecting = threading.Lock()
        self.deadline = deadline
        self.attempts = 0  # every request sent, retries included, by all threads
        self._counting = threading.Lock()

    def _connected(self) -> ApiClient:
        with self._connecting:
            if self._client is None:
                configuration = load_configuration(self._kubeconfig, self._context)
                self._client, self._host = ApiClient(configuration), configuration.host
            return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def get(self, path: str, what: Resource, query: Mapping[str, Any] | None = None) -> Any:
        """The JSON body at path, or None for 404."""
        client = self._connected()
        url_path = f"{path}?{urlencode(query)}" if query else path
        backoff = _FIRST_BACKOFF
        attempts = 0
        last = "no attempt made"
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise ClusterError(
                    f"cannot {what} at {self._host}: gave up at the deadline after"
                    f" {attempts} attempts; last: {last}"
                )
            attempts += 1
            with self._counting:
                self.attempts += 1
            try:
                status, body, retry_after = _request(client, url_path, remaining)
            except (urllib3.exceptions.HTTPError, ApiException, OSError) as error:
                last = _describe_transport(error)
                retry_after = None
            else:
                if status == 200:
                    try:
                        return json.loads(body)
                    except ValueError:
                        raise ClusterError(
                            f"cannot {what}: the apiserver answered with something not JSON"
                        ) from None
                if status == 404:
                    return None
                message = _status_message(body)
                if status not in _RETRIED_STATUSES:
                    refused = Forbidden if status == 403 else ClusterError
                    raise refused(_refusal(status, what, message, self._host))
                last = f"HTTP {status}: {message}"
            # Never sooner than the server's Retry-After, nor than our own backoff (a
            # Retry-After of 0 must not become a tight loop); a Retry-After past the
            # deadline ends the wait now rather than at the deadline.
            if retry_after is not None and retry_after >= self.deadline - time.monotonic():
                raise ClusterError(
                    f"cannot {what} at {self._host}: the apiserver asked to retry after"
                    f" {retry_after:g}s, past the deadline, after {_attempts(attempts)};"
                    f" last: {last}"
                )
            pause = max(retry_after or 0.0, backoff * random.uniform(0.8, 1.2))
            time.sleep(max(0.0, min(pause, self.deadline - time.monotonic())))
            backoff = min(backoff * 2, _MAX_BACKOFF)

    def server_version(self) -> tuple[int, int]:
        info = self.get("/version", Resource("get", "the server version"))
        try:
            major = int(str(info["major"]).rstrip("+"))
            minor = int(str(info["minor"]).rstrip("+"))
        except (TypeError, KeyError, ValueError):
            raise ClusterError(f"cannot read the server version from /version: {info!r}") from None
        return major, minor

    def get_crds(self, names: Iterable[str]) -> dict[str, Any]:
        """Each named CRD's body, or None when the cluster does not have it; read
        concurrently, since a chart may name thousands."""
        return self.get_named(CRDS, "customresourcedefinitions.apiextensions.k8s.io", names)

    def get_named(self, collection: str, resource: str, names: Iterable[str]) -> dict[str, Any]:
        """Each named cluster-scoped object of a collection (its path; ``resource`` as
        PLURAL.GROUP for messages), or None when the cluster does not have it; read
        concurrently."""
        wanted = sorted(set(names))

        def fetch(name: str) -> Any:
            return self.get(f"{collection}/{quote(name, safe='')}", Resource("get", resource, name))

        with ThreadPoolExecutor(max_workers=_CONCURRENT_READS) as pool:
            return dict(zip(wanted, pool.map(fetch, wanted), strict=True))

    def list_page(self, path: str, what: Resource, token: str = "", page: int = PAGE) -> Any:
        """One page of a list (from its continue token), or None when there is no such
        resource."""
        query: dict[str, Any] = {"limit": page}
        if token:
            query["continue"] = token
        return self.get(path, what, query)

    def list_rest(self, body: Any, path: str, what: Resource, page: int = PAGE) -> Iterator[Any]:
        """Every item of a list from a page already read (``body``) on, page by page."""
        while body is not None:
            yield from body.get("items") or []
            token = (body.get("metadata") or {}).get("continue") or ""
            body = self.list_page(path, what, token, page) if token else None

    def list_all(self, path: str, what: Resource, page: int = PAGE) -> Iterator[Any]:
        """Every item of a list, page by page."""
        yield from self.list_rest(self.list_page(path, what, page=page), path, what, page)


def _request(client: ApiClient, path: str, remaining: float) -> tuple[int, bytes, float | None]:
    method, url, headers, _, _ = client.param_serialize(
        "GET",
        path,
        header_params={"Accept": "application/json"},
        auth_settings=["BearerToken"],
    )
    timeout = min(remaining, 30.0)
    response = client.call_api(method, url, headers, _request_timeout=(min(timeout, 10.0), timeout))
    body = response.read()
    retry_after = response.getheader("Retry-After")
    seconds = float(retry_after) if retry_after and retry_after.isdigit() else None
    return response.status, body, seconds


def _status_message(body: bytes) -> str:
    try:
        status = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace").strip() or "(no message)"
    message = status.get("message") if isinstance(status, dict) else None
    return str(message) if message else "(no message)"


def _refusal(status: int, what: Resource, message: str, host: str) -> str:
    if status == 403:
        return (
            f"forbidden: the credentials may not {what}; grant `{what.verb}` on"
            f" {what.resource} (apiserver: {message})"
        )
    if status == 401:
        return f"unauthorized: {host} rejected the credentials ({message})"
    return f"cannot {what}: HTTP {status}: {message}"


def _describe_transport(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    if isinstance(error, ApiException):
        return f"{error.reason}".strip().splitlines()[0] if error.reason else str(error)
    return f"{type(error).__name__}: {reason or error}"


def _attempts(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"
