"""Loopback only: the egress proxy the test kube-apiserver dials everything through.

kube-apiserver sends its calls to webhooks (admission and CRD conversion, by URL or by
Service), to aggregated APIs, to the kubelet (``pods/log``) and the ``proxy`` subresources
through the dialer its ``--egress-selector-config-file`` names: ``controlplane`` for a webhook
given by URL, ``cluster`` for the rest. :func:`egress_selector_config` routes both to
:class:`LoopbackEgress`, an HTTP CONNECT proxy on a Unix socket. The apiserver sends it the
address unresolved (``name.namespace.svc:443`` becomes the Service's ClusterIP, a URL's host
name stays a name), and the proxy relays only to a loopback address: anything else is
refused at once, with no DNS lookup and no connection attempt off the machine. The apiserver
reports the refusal in the call's error:
``proxy error from <socket> while dialing <address>, code 403: 403 testenv: ...``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path

import yaml

from .proxy import relay

REFUSED = "testenv: loopback only, no connection off the machine"
PROXY_VARIABLES = frozenset(
    case(name)
    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
    for case in (str.lower, str.upper)
)


def without_proxies(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``env`` without proxy variables, for every process the test environment starts: Go
    and Python clients send what is not loopback through the proxy they name."""
    return {k: v for k, v in env.items() if k not in PROXY_VARIABLES}


def egress_selector_config(socket_path: Path) -> str:
    """An ``EgressSelectorConfiguration`` sending ``controlplane`` and ``cluster`` egress
    through the CONNECT proxy at ``socket_path`` (etcd stays direct, on loopback)."""
    connection = {
        "proxyProtocol": "HTTPConnect",
        "transport": {"uds": {"udsName": str(socket_path)}},
    }
    return yaml.safe_dump(
        {
            "apiVersion": "apiserver.k8s.io/v1beta1",
            "kind": "EgressSelectorConfiguration",
            "egressSelections": [
                {"name": name, "connection": connection} for name in ("controlplane", "cluster")
            ],
        },
        sort_keys=False,
    )


def loopback_target(authority: str) -> tuple[str, int] | None:
    """``host:port`` as (address, port) when the host is a loopback address or
    ``localhost``; None for anything else (a name is never looked up)."""
    host, _, port = authority.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not port.isdigit():
        return None
    if host == "localhost":
        return "127.0.0.1", int(port)
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        return None
    return (host, int(port)) if loopback else None


class LoopbackEgress:
    """HTTP CONNECT proxy on the Unix socket ``path``, relaying to loopback addresses only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.refused: list[str] = []  # the addresses it refused, in order
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen()
        threading.Thread(target=self._accept, name="loopback-egress", daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            authority = _read_connect(client)
        except (OSError, ValueError):
            client.close()
            return
        target = loopback_target(authority)
        if target is None:
            self.refused.append(authority)
            _answer(client, f"403 {REFUSED}")
            return
        try:
            server = socket.create_connection(target, timeout=10)
        except OSError as err:
            _answer(client, f"502 testenv: {authority}: {err.strerror or err}")
            return
        server.settimeout(None)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        relay(client, server)


def _read_connect(client: socket.socket) -> str:
    """The authority of the ``CONNECT`` request head the client sends (nothing follows
    it before the answer)."""
    head = b""
    while b"\r\n\r\n" not in head:
        data = client.recv(4096)
        if not data or len(head) > 65536:
            raise ValueError("no CONNECT request head")
        head += data
    method, authority, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
    if method != "CONNECT":
        raise ValueError(f"{method}: only CONNECT")
    return authority


def _answer(client: socket.socket, status: str) -> None:
    with contextlib.suppress(OSError):
        client.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n".encode())
    client.close()
