"""Where the test environment's binaries are: the build cache of tools/kube-testenv/build.sh."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBE_TESTENV_DIR = Path(__file__).resolve().parents[1] / "kube-testenv"
BUILD_COMMAND = "tools/kube-testenv/build.sh"
BIN_ENV = "UG_TESTENV_BIN"
# The oldest minor the truth rows run on too: its own module dir builds its kube-apiserver only.
OLDEST_MINOR = "1.32"
OLDEST_DIR = KUBE_TESTENV_DIR / f"v{OLDEST_MINOR}"
OLDEST_BUILD_COMMAND = f"{BUILD_COMMAND} tools/kube-testenv/v{OLDEST_MINOR}"


def kubernetes_version(go_mod: Path = KUBE_TESTENV_DIR / "go.mod") -> str:
    """The k8s.io/kubernetes version pinned in tools/kube-testenv/go.mod, e.g. ``v1.35.4``."""
    for line in go_mod.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "k8s.io/kubernetes" and parts[1].startswith("v"):
            return parts[1]
    raise RuntimeError(f"no k8s.io/kubernetes requirement in {go_mod}")


def minor_of(version: str) -> str:
    """``v1.35.4`` -> ``1.35``."""
    return ".".join(version.removeprefix("v").split(".")[:2])


def _cache_bin_dir(version: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "upgrade-guard" / "testenv" / version / "bin"


NEWEST_MINOR = minor_of(kubernetes_version())
# The minors the truth rows that differ by version run on, newest first.
MINORS = (NEWEST_MINOR, OLDEST_MINOR)


def default_bin_dir() -> Path:
    """``$UG_TESTENV_BIN`` or ``${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/testenv/<ver>/bin``."""
    override = os.environ.get(BIN_ENV)
    if override:
        return Path(override)
    return _cache_bin_dir(kubernetes_version())


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path
    # Where kube-apiserver is when it is not in bin_dir (another minor's build).
    apiserver_dir: Path | None = None

    @property
    def kube_apiserver(self) -> Path:
        return (self.apiserver_dir or self.bin_dir) / "kube-apiserver"

    @property
    def etcd(self) -> Path:
        return self.bin_dir / "etcd"

    @property
    def helm(self) -> Path:
        return self.bin_dir / "helm"

    @property
    def kubectl(self) -> Path:
        return self.bin_dir / "kubectl"

    def missing(self) -> list[str]:
        paths = [self.kube_apiserver, self.etcd, self.helm, self.kubectl]
        return [path.name for path in paths if not os.access(path, os.X_OK)]


def find_binaries() -> Binaries:
    return Binaries(default_bin_dir())


def find_oldest_binaries() -> Binaries:
    """The first build's etcd, helm and kubectl with the oldest minor's kube-apiserver."""
    return Binaries(
        default_bin_dir(), apiserver_dir=_cache_bin_dir(kubernetes_version(OLDEST_DIR / "go.mod"))
    )
