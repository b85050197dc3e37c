"""helm, run by the plugin's command and its checks: a render, a history, a chart shown."""

from __future__ import annotations

import enum
import os
import subprocess
import sys

from upgrade_guard.commands import options
from upgrade_guard.findings import ExitCode

# What helm says when it cannot reach or read the cluster (Helm 4: "kubernetes cluster
# unreachable"; Helm 3 capitalized it), lower-cased: exit 3, as the hook's reads.
_UNREADABLE = ("kubernetes cluster unreachable", "forbidden", "unauthorized")


def binary() -> str:
    """The helm that runs the plugin (Helm sets HELM_BIN), else the one on PATH."""
    return os.environ.get("HELM_BIN") or "helm"


class HelmOperation(enum.StrEnum):
    install = "install"
    upgrade = "upgrade"
    rollback = "rollback"
    crds = "crds"


class Helm:
    """helm, running: ``output()`` is its standard output; on failure its own message, then
    exit 2 (3 when it could not reach or read the cluster). Its output is never shown: it
    holds the values."""

    def __init__(self, *args: str) -> None:
        self.args = args
        try:
            self.process = subprocess.Popen(
                [binary(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except OSError as error:
            options.fail(ExitCode.BAD_INPUT, f"cannot run {binary()}: {error.strerror}")

    def output(self) -> str:
        stdout, stderr = self.process.communicate()
        if self.process.returncode != 0:
            sys.stderr.write(stderr)
            unreadable = any(sign in stderr.lower() for sign in _UNREADABLE)
            options.fail(
                ExitCode.CLUSTER_UNREACHABLE if unreadable else ExitCode.BAD_INPUT,
                f"helm {self.args[0]} failed (exit {self.process.returncode}), as above"
                + _render_hint(self.args, stderr),
            )
        return stdout

    def stop(self) -> None:
        """Ended, where the run ended before its output was read."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


def helm_output(*args: str) -> str:
    return Helm(*args).output()


def _render_hint(args: tuple[str, ...], stderr: str) -> str:
    """What works where the chart cannot render with the previous release's values kept
    whole (``--reuse-values`` keeps the old chart's values too, helm/helm#9000)."""
    rendering = 'executing "' in stderr or "render error" in stderr.lower()  # Helm 4, Helm 3
    if "--reuse-values" not in args or not rendering:
        return ""
    return (
        ": the new chart does not render with the previous release's values kept whole"
        " (--reuse-values); --reset-then-reuse-values takes the new chart's defaults under the"
        " values you gave (pin an image tag you need with --set), or give a values file (-f)"
    )
