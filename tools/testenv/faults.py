"""An HTTPS proxy in front of the real apiserver that a test tells to answer some requests
itself, so a client's retries are held to real HTTP: every other request goes to the
apiserver as sent (method, path, headers with the bearer token, body) and its real answer
comes back unchanged. What it answers itself is worded as the apiserver words it (a
``Status`` body, ``Retry-After`` as the apiserver sends it with a 429). It records every
request, so a test can count the retries and see how long the client waited between them.
It is test infrastructure, not a fake apiserver: without a fault it is a plain relay.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import urllib3
import yaml

from .pki import make_serving_pki

# Connection-level headers (RFC 9110 7.6.1) and the ones the relay sets itself.
_NOT_RELAYED = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
_REASONS = {
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected by the test proxy"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
}


@dataclass(frozen=True)
class Fault:
    """Answer requests whose path starts with ``path`` ("" matches all) with ``status``:
    the first ``times`` of them, or every one when ``times`` is None."""

    status: int
    path: str = ""
    times: int | None = None
    retry_after: int | None = None  # seconds, sent as Retry-After


@dataclass
class _Armed:
    fault: Fault
    matched: int = 0


@dataclass(frozen=True)
class Seen:
    method: str
    path: str  # without the query
    status: int
    injected: bool
    received: float  # time.monotonic() when the request arrived
    answered: float  # ... and when its answer had been sent


class FaultProxy:
    """Listens on https://127.0.0.1:port with a CA of its own (``ca_cert``) and relays to
    ``upstream``, trusting ``upstream_ca``. ``close()`` stops it."""

    def __init__(self, upstream: str, upstream_ca: Path, workdir: Path) -> None:
        self.upstream = upstream.rstrip("/")
        self.ca_cert, cert, key = make_serving_pki(workdir)
        self._upstream = urllib3.PoolManager(
            maxsize=8, ssl_context=ssl.create_default_context(cafile=str(upstream_ca)),
            retries=False,
        )  # fmt: skip
        self._armed: list[_Armed] = []
        self._seen: list[Seen] = []
        self._lock = threading.Lock()
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        self._server = _Server(("127.0.0.1", 0), _Handler, tls, self)
        self.port: int = self._server.server_address[1]
        self.server = f"https://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def inject(self, fault: Fault) -> None:
        with self._lock:
            self._armed.append(_Armed(fault))

    def seen(self, path: str = "") -> list[Seen]:
        """The requests whose path starts with ``path``, in the order they arrived."""
        with self._lock:
            return [s for s in self._seen if s.path.startswith(path)]

    def kubeconfig(self, kubeconfig: Path, path: Path) -> Path:
        """A copy of ``kubeconfig`` (one cluster) that reaches the apiserver through here."""
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        cluster["server"] = self.server
        cluster["certificate-authority-data"] = base64.b64encode(self.ca_cert.read_bytes()).decode()
        path.write_text(yaml.safe_dump(config))
        return path

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._upstream.clear()

    def answer(
        self, method: str, target: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, list[tuple[str, str]], bytes, bool] | None:
        """(status, headers, body, injected) for one request, or None when the apiserver
        did not answer."""
        fault = self._fault_for(urlsplit(target).path)
        if fault is not None:
            return (*_injected(fault), True)
        try:
            response = self._upstream.request(
                method, self.upstream + target, headers=headers, body=body,
                preload_content=True, decode_content=False, redirect=False, timeout=60.0,
            )  # fmt: skip
        except urllib3.exceptions.HTTPError:
            return None
        relayed = [(k, v) for k, v in response.headers.items() if k.lower() not in _NOT_RELAYED]
        return response.status, relayed, response.data, False

    def record(self, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)

    def _fault_for(self, path: str) -> Fault | None:
        with self._lock:
            for armed in self._armed:
                times = armed.fault.times
                if path.startswith(armed.fault.path) and (times is None or armed.matched < times):
                    armed.matched += 1
                    return armed.fault
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], tls: ssl.SSLContext,
        proxy: FaultProxy,
    ) -> None:  # fmt: skip
        super().__init__(address, handler)
        self.tls = tls
        self.proxy = proxy


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the kubernetes client's pool expects
    server: _Server

    def setup(self) -> None:
        # The TLS handshake in the connection's own thread, not in the accepting one.
        self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``FaultProxy.seen()``."""

    def _handle(self) -> None:
        received = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _NOT_RELAYED}
        answer = self.server.proxy.answer(self.command, self.path, headers, body)
        if answer is None:
            self.close_connection = True  # the apiserver did not answer: neither do we
            return
        status, relayed, content, injected = answer
        self.send_response_only(status)  # the apiserver's own Date, no Server of ours
        for name, value in relayed:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        self.wfile.flush()
        path = urlsplit(self.path).path
        self.server.proxy.record(
            Seen(self.command, path, status, injected, received, time.monotonic())
        )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


def _injected(fault: Fault) -> tuple[int, list[tuple[str, str]], bytes]:
    reason, message = _REASONS.get(fault.status, ("", f"HTTP {fault.status}"))
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": fault.status,
    }
    headers = [
        ("Content-Type", "application/json"),
        ("Date", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())),
    ]
    if fault.retry_after is not None:
        status["details"] = {"retryAfterSeconds": fault.retry_after}
        headers.append(("Retry-After", str(fault.retry_after)))
    return fault.status, headers, json.dumps(status).encode()
