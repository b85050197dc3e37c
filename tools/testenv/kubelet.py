"""Just enough of a kubelet for ``kubectl logs`` / ``helm``'s hook-output-log-policy.

The apiserver serves ``pods/log`` by calling the kubelet of the Pod's node at
``https://<node InternalIP>:<status.daemonEndpoints.kubeletEndpoint.Port>/containerLogs/
<namespace>/<pod>/<container>``; with no ``--kubelet-certificate-authority`` it does not
verify the kubelet's certificate. :class:`FakeKubelet` registers a Node pointing at a
loopback HTTPS server and answers that one path from logs the Job runner records.
Nothing else of a kubelet is emulated (no exec, attach, port-forward, metrics).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

from .controlplane import ControlPlane, free_port

LogSource = Callable[[], bytes]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        source = None
        if len(parts) == 4 and parts[0] == "containerLogs":
            source = self.server.kubelet.log_source(parts[1], parts[2], parts[3])
        if source is None:
            self.send_error(404, "no such container log in the test kubelet")
            return
        body = source()
        query = parse_qs(url.query)
        if "tailLines" in query:
            n = int(query["tailLines"][0])
            lines = body.splitlines(keepends=True)
            body = b"".join(lines[-n:]) if n > 0 else b""
        if "limitBytes" in query:
            body = body[: int(query["limitBytes"][0])]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    kubelet: FakeKubelet


class FakeKubelet:
    node_name = "testenv-node"

    def __init__(self, control_plane: ControlPlane) -> None:
        self.cp = control_plane
        self.port = 0
        self._logs: dict[tuple[str, str, str], LogSource] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeKubelet:
        self.port = free_port()
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.kubelet = self
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(self.cp.pki.serving_cert), str(self.cp.pki.serving_key))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="fake-kubelet", daemon=True
        )
        self._thread.start()
        self._register_node()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _register_node(self) -> None:
        a = self.cp.admin
        a.ensure(
            "/api/v1/nodes",
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": self.node_name,
                    "labels": {"kubernetes.io/hostname": self.node_name},
                },
            },
        )
        a.patch(
            f"/api/v1/nodes/{self.node_name}/status",
            {
                "status": {
                    "addresses": [
                        {"type": "InternalIP", "address": "127.0.0.1"},
                        {"type": "Hostname", "address": self.node_name},
                    ],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
                }
            },
        )

    def set_log(self, namespace: str, pod: str, container: str, source: LogSource) -> None:
        with self._lock:
            self._logs[(namespace, pod, container)] = source

    def log_source(self, namespace: str, pod: str, container: str) -> LogSource | None:
        with self._lock:
            return self._logs.get((namespace, pod, container))
