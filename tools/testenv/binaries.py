"""Where the test environment's binaries are: the build cache of tools/kube-testenv/build.sh."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBE_TESTENV_DIR = Path(__file__).resolve().parents[1] / "kube-testenv"
BUILD_COMMAND = "tools/kube-testenv/build.sh"
BIN_ENV = "UG_TESTENV_BIN"
NAMES = ("kube-apiserver", "etcd", "helm", "kubectl")


def kubernetes_version(go_mod: Path = KUBE_TESTENV_DIR / "go.mod") -> str:
    """The k8s.io/kubernetes version pinned in tools/kube-testenv/go.mod, e.g. ``v1.35.4``."""
    for line in go_mod.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "k8s.io/kubernetes" and parts[1].startswith("v"):
            return parts[1]
    raise RuntimeError(f"no k8s.io/kubernetes requirement in {go_mod}")


def default_bin_dir() -> Path:
    """``$UG_TESTENV_BIN`` or ``${XDG_CACHE_HOME:-~/.cache}/upgrade-guard/testenv/<ver>/bin``."""
    override = os.environ.get(BIN_ENV)
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "upgrade-guard" / "testenv" / kubernetes_version() / "bin"


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path

    @property
    def kube_apiserver(self) -> Path:
        return self.bin_dir / "kube-apiserver"

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
        return [n for n in NAMES if not os.access(self.bin_dir / n, os.X_OK)]


def find_binaries() -> Binaries:
    return Binaries(default_bin_dir())
