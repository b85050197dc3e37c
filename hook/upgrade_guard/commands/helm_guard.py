"""`upgrade-guard helm`: what `helm guard` runs (the Helm plugin in ``helm-guard/``).

``helm guard upgrade|install RELEASE CHART [helm flags]`` has helm itself render what it
would apply: ``helm upgrade|install ... --dry-run=server --output json`` with the admin's own
flags, so ``-f``, ``--set``, ``--version``, ``--reuse-values`` and
``--reset-then-reuse-values`` mean exactly what they mean to Helm. On install the chart's
``crds/`` directories count too (Helm 4 applies them on install, server-side, over a CRD
already there), read from ``helm template ... --include-crds``. ``helm guard rollback
RELEASE [REVISION]`` reads the target revision's release record, whose manifest Helm
re-applies. ``helm guard crds CHART [--version V]`` checks the ``crds/`` files (``helm show
crds``) before the ``kubectl apply`` a chart's docs prescribe.

Then the hook's own checks run with the admin's kubeconfig (Helm passes its global flags as
``HELM_NAMESPACE``, ``HELM_KUBECONTEXT`` and ``KUBECONFIG``): a dry run writes nothing, and
the checks make only the hook's reads. A chart that adopted the library is judged with the
arguments and files its guard Job is rendered with (counters, image table, policy, the
admin's acceptances), so the plugin and the hook reach the same verdict. Nothing helm prints
is shown on success: its output holds the release's values.
"""

from __future__ import annotations

import os
import subprocess
from typing import Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.commands.helm_process import Helm, HelmOperation, binary
from upgrade_guard.findings import ExitCode

# Helm's global flags that name another identity than the kubeconfig's: the checks read the
# cluster with the kubeconfig, so they would read as someone else.
_OTHER_IDENTITY = {
    "HELM_KUBEAPISERVER": "--kube-apiserver",
    "HELM_KUBETOKEN": "--kube-token",
    "HELM_KUBEASUSER": "--kube-as-user",
    "HELM_KUBEASGROUPS": "--kube-as-group",
    "HELM_KUBECAFILE": "--kube-ca-file",
}


@options.guarded
def helm_guard(
    operation: Annotated[
        HelmOperation,
        typer.Argument(
            metavar="OPERATION",
            help="What is about to happen: install, upgrade, rollback, or crds (the kubectl"
            " apply of a chart's crds/).",
        ),
    ],
    helm_args: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="HELM_ARGS...",
            help="As for helm: RELEASE CHART [flags] (install, upgrade), RELEASE [REVISION]"
            " (rollback), CHART [--version V] (crds).",
        ),
    ] = None,
    run: Annotated[
        bool,
        typer.Option("--run", help="After a pass, run the helm command itself (not for crds)."),
    ] = False,
    policy: options.PolicyOption = None,
    accept: Annotated[
        list[str] | None,
        typer.Option(
            help="A finding the admin accepts, as the report's accept: entry (JSON); once per"
            " finding. A chart that adopted the guard takes them in its values instead."
        ),
    ] = None,
) -> None:
    """Check what a helm install, upgrade or rollback would apply, or a chart's crds/,
    against the live cluster with the hook's checks; exit 0, 1, 2 or 3 as the hook does."""
    args = list(helm_args or [])
    for variable, flag in _OTHER_IDENTITY.items():
        if os.environ.get(variable):
            raise options.UsageProblem(
                f"helm {flag}: the guard reads the cluster as the kubeconfig says; give a"
                " kubeconfig context (--kube-context) for that identity instead"
            )
    if run and operation is HelmOperation.crds:
        raise options.UsageProblem("--run: the crds/ are applied with kubectl, not helm")
    # helm renders first (on cert-manager a second or more): the checks' modules and the
    # cluster client are imported meanwhile.
    render = (
        Helm(operation, *args, "--dry-run=server", "--output", "json")
        if operation in (HelmOperation.install, HelmOperation.upgrade)
        else None
    )
    try:
        from upgrade_guard.commands import helm_plugin

        code = helm_plugin.check(operation, args, render, policy, accept or [])
    finally:
        if render is not None:
            render.stop()
    if code != ExitCode.SAFE or not run:
        raise typer.Exit(int(code))
    typer.echo(f"helm guard: passed; running helm {operation}", err=True)
    raise typer.Exit(subprocess.run([binary(), operation.value, *args], check=False).returncode)
