"""Throw-away keys and certificates for one test control plane, made with the openssl CLI."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .egress import without_proxies


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    serving_cert: Path  # for 127.0.0.1 / localhost, signed by ca_cert
    serving_key: Path
    sa_key: Path  # service-account token signing key (EC P-256, ES256)
    sa_pub: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["openssl", *args],
        cwd=cwd,
        env=without_proxies(),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def make_serving_pki(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a serving certificate for 127.0.0.1 / localhost signed by it:
    (ca_cert, serving_cert, serving_key)."""
    if shutil.which("openssl") is None:
        raise RuntimeError(
            "the test certificates need the openssl command (apt-get install openssl)"
        )
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=upgrade-guard-testenv-ca", cwd=d)  # fmt: skip
    _openssl("req", *ec, "-keyout", "serving.key", "-out", "serving.csr",
             "-subj", "/CN=127.0.0.1", cwd=d)  # fmt: skip
    (d / "serving.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "extendedKeyUsage=serverAuth\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    _openssl("x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "serving.crt", "-days", "2",
             "-extfile", "serving.ext", cwd=d)  # fmt: skip
    return d / "ca.crt", d / "serving.crt", d / "serving.key"


def make_pki(directory: Path) -> Pki:
    d = directory
    ca_cert, serving_cert, serving_key = make_serving_pki(d)
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", "sa.key", cwd=d)  # fmt: skip
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
    return Pki(ca_cert, serving_cert, serving_key, d / "sa.key", d / "sa.pub")
