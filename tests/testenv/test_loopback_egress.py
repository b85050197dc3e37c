"""Which CONNECT targets the control plane's egress proxy relays: loopback addresses only,
and no name but ``localhost`` (tests/cluster/test_loopback_only.py has the apiserver's side)."""

from __future__ import annotations

import pytest

from testenv.egress import loopback_target, without_proxies


@pytest.mark.parametrize(
    ("authority", "target"),
    [
        ("127.0.0.1:443", ("127.0.0.1", 443)),
        ("127.8.9.10:8443", ("127.8.9.10", 8443)),
        ("[::1]:443", ("::1", 443)),
        ("localhost:10250", ("127.0.0.1", 10250)),
        ("10.0.0.7:443", None),
        ("192.168.1.1:443", None),
        ("webhook.ns.svc:443", None),
        ("localhost.example.com:443", None),
        ("127.0.0.1.nip.io:443", None),
        ("127.0.0.1", None),
    ],
)
def test_only_loopback_addresses_pass(authority: str, target: tuple[str, int] | None) -> None:
    assert loopback_target(authority) == target


def test_processes_start_without_proxy_variables() -> None:
    env = {"PATH": "/bin", "HTTPS_PROXY": "http://proxy:3128", "http_proxy": "x", "NO_PROXY": "*",
           "no_proxy": "*", "ALL_PROXY": "socks5://x", "all_proxy": "x", "HTTP_PROXY": "x",
           "https_proxy": "x", "PROXY_NOTE": "kept"}  # fmt: skip
    assert without_proxies(env) == {"PATH": "/bin", "PROXY_NOTE": "kept"}
