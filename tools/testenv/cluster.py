"""The session-wide handle the cluster tests get (the ``cluster`` fixture)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .binaries import Binaries
from .controlplane import ControlPlane
from .egress import without_proxies
from .kube import JSON, Kube

# helm(*args, kubeconfig=None, timeout=...) / kubectl(...) fixtures: run, capture, don't check.
ToolRunner = Callable[..., subprocess.CompletedProcess[str]]


@dataclass
class Cluster:
    """What a cluster test gets: see :func:`cluster`."""

    venv_bin: Path  # the project's .venv/bin (console scripts), first on PATH
    control_plane: ControlPlane
    binaries: Binaries
    kubeconfig: Path  # admin (system:masters) kubeconfig
    admin: Kube  # raw JSON REST client, admin
    api_client: Any  # kubernetes.client.ApiClient, admin

    def make_service_account(
        self,
        namespace: str,
        rules: Sequence[JSON] = (),
        *,
        name: str | None = None,
        cluster_rules: Sequence[JSON] = (),
    ) -> Path:
        """ServiceAccount with a Role of ``rules`` (plus a ClusterRole of ``cluster_rules``);
        returns a kubeconfig holding its TokenRequest token."""
        sa = self.control_plane.make_service_account(
            namespace, rules, name=name, cluster_rules=cluster_rules
        )
        return sa.kubeconfig

    def client(self, kubeconfig: Path) -> Kube:
        """Raw REST client for a kubeconfig written by this fixture (token auth)."""
        config = yaml.safe_load(kubeconfig.read_text())
        return self.control_plane.client_for_token(config["users"][0]["user"]["token"])

    def env(self, kubeconfig: Path | None = None) -> dict[str, str]:
        """Environment for running kubectl/helm/upgrade-guard against this cluster."""
        env = without_proxies()
        env["KUBECONFIG"] = str(kubeconfig or self.kubeconfig)
        env["PATH"] = os.pathsep.join([str(self.venv_bin), str(self.binaries.bin_dir), env["PATH"]])
        return env
