"""A TCP relay in front of the apiserver that a test can cut or hold, so "the apiserver went
away mid-run" and "the apiserver hangs" are tested against the real one."""

from __future__ import annotations

import contextlib
import select
import socket
import threading


class TcpProxy:
    """Relays 127.0.0.1:port to target. ``hold``: accept connections but relay nothing.
    ``connected`` is set when the first client connects; ``cut()`` drops every connection
    and stops listening, so later connects are refused."""

    def __init__(self, target: tuple[str, int], *, hold: bool = False) -> None:
        self.target = target
        self.hold = hold
        self.connected = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    client.close()
                    return
                self._sockets.append(client)
            self.connected.set()
            if not self.hold:
                threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.target)
        except OSError:
            client.close()
            return
        with self._lock:
            self._sockets.append(server)
        relay(client, server)

    def cut(self) -> None:
        with self._lock:
            self._closed = True
            self._listener.close()
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


def relay(client: socket.socket, server: socket.socket) -> None:
    """Copy bytes both ways until either side closes, then close both."""
    peers = {client: server, server: client}
    try:
        while True:
            readable, _, _ = select.select(list(peers), [], [], 1.0)
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                peers[sock].sendall(data)
    except (OSError, ValueError):  # ValueError: a socket closed under select() (TcpProxy.cut)
        return
    finally:
        client.close()
        server.close()
