"""The checks of `upgrade-guard helm` (commands/helm_guard.py): what helm would apply, as
the hook judges it, over one cluster session."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from upgrade_guard.commands import hook, options
from upgrade_guard.commands.helm_process import Helm, HelmOperation, helm_output
from upgrade_guard.commands.hook import Inputs
from upgrade_guard.counters import history
from upgrade_guard.crd import Crd
from upgrade_guard.findings import ExitCode
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError, documents_of
from upgrade_guard.load.helm_output import GuardJob, crds_dir_files, crds_dir_names, guard_job
from upgrade_guard.load.helm_record import Record, record_name, record_of
from upgrade_guard.pipelines import hook_run as pipeline
from upgrade_guard.report.ways_out import Asked

if TYPE_CHECKING:
    from upgrade_guard.cluster.client import Api


def _release_json(text: str, command: str) -> Mapping[str, Any]:
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise LoadError(f"helm {command} --output json: not JSON ({error.msg})") from None
    if not isinstance(body, dict):
        raise LoadError(f"helm {command} --output json: not a release")
    return body


# The guard Job's options the plugin reads, by the field of Inputs they set (repeatable ones
# are tuples there), and those it does not need: it reads the records and the cluster itself.
_JOB_OPTIONS = {f"--{name.replace('_', '-')}": name for name in Inputs.__dataclass_fields__}
_JOB_IGNORED = {"--phase", "--release", "--namespace", "--revision", "--timeout"}
_JOB_FLAGS = {"--fail-open"}


def _hook_inputs(job: GuardJob, directory: Path) -> Inputs:
    """The guard Job's options as the hook reads them, its files written to directory (the
    ConfigMap's keys are file names) and its mount path moved there. The library renders
    each option as ``--name=value``, ``--fail-open`` alone."""
    for name, data in job.files.items():
        if "/" in name or name in ("", ".", ".."):
            raise LoadError(f"the guard's ConfigMap holds {name!r}, not a file name")
        (directory / name).write_bytes(data)
    mount = job.mount.rstrip("/") + "/"
    single: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    for arg in job.args:
        option, has_value, value = arg.partition("=")
        if (option in _JOB_FLAGS and not has_value) or (option in _JOB_IGNORED and has_value):
            continue
        field = _JOB_OPTIONS.get(option)
        if field is None or not has_value:
            raise LoadError(
                f"the guard's Job arguments: {arg!r} is not an option this plugin reads (a"
                " library newer than the plugin? update the plugin)"
            )
        value = value.replace(mount, f"{directory}/", 1) if value.startswith(mount) else value
        if isinstance(getattr(Inputs(), field), tuple):
            repeated.setdefault(field, []).append(value)
        elif field in single:
            raise LoadError(f"the guard's Job arguments: {option} given twice")
        else:
            single[field] = value
    try:
        max_bytes = int(single.get("max_bytes", DEFAULT_MAX_BYTES))
    except ValueError:
        raise LoadError("the guard's Job arguments: --max-bytes is not a number") from None
    return Inputs(
        policy=single.get("policy"),
        crds=single.get("crds"),
        crd_names=single.get("crd_names"),
        rendered_crds=single.get("rendered_crds"),
        live_objects=single.get("live_objects"),
        counter=tuple(repeated.get("counter", ())),
        controller_image=tuple(repeated.get("controller_image", ())),
        image_table=single.get("image_table"),
        accept=tuple(repeated.get("accept", ())),
        chart_version=single.get("chart_version"),
        max_bytes=max_bytes,
    )


def _prepared(
    job: GuardJob | None,
    chart: Mapping[str, Crd],
    chart_version: str,
    policy: str | None,
    accept: list[str],
    directory: Path,
) -> tuple[pipeline.Prepared, bool]:
    """The checks' inputs, and whether they are the adopted chart's: its guard Job's
    arguments and files, else only the CRDs the release applies (and the plugin's options)."""
    if job is None:
        given = Inputs(policy=policy, accept=tuple(accept), chart_version=chart_version)
        return hook.prepare(given, chart), False
    if policy or accept:
        raise options.UsageProblem(
            "this chart adopted the guard: its policy is the chart's, and acceptances go in its"
            " values (--set-json 'upgrade-guard.accept=[...]'), not --policy or --accept"
        )
    return hook.prepare(_hook_inputs(job, directory), chart), True


def check(
    operation: HelmOperation,
    args: list[str],
    render: Helm | None,
    policy: str | None,
    accept: list[str],
) -> ExitCode:
    """The checks of ``helm guard`` over one cluster session with the admin's kubeconfig;
    ``render``: helm's dry run of an install or upgrade, started."""
    reach = hook.Reach(
        kubeconfig=None,
        context=os.environ.get("HELM_KUBECONTEXT") or None,
        deadline=time.monotonic() + hook.DEFAULT_TIMEOUT,
        log=hook.TerminationLog.off(),
        fail_open=False,
        output=options.TEXT,
        limit=sys.maxsize,  # a terminal, not Helm's one-line print of a hook's log
    )
    from upgrade_guard.cluster.client import Api

    with (
        tempfile.TemporaryDirectory(prefix="helm-guard-") as scratch,
        Api(reach.kubeconfig, reach.context, reach.deadline) as api,
    ):
        return _check(operation, args, render, policy, accept, reach, api, Path(scratch))


def _check(
    operation: HelmOperation,
    args: list[str],
    render: Helm | None,
    policy: str | None,
    accept: list[str],
    reach: hook.Reach,
    api: Api,
    scratch: Path,
) -> ExitCode:
    """The checks, reported, every cluster read through the one session ``api``; ``render``:
    helm's dry run of an install or upgrade, started."""
    if operation is HelmOperation.crds:
        return _check_crds(args, policy, accept, reach, api, scratch)
    restores = None
    if operation is HelmOperation.rollback:
        pending, current, body = _rollback(args, api)
        restores = _revision_of(body)
    else:
        assert render is not None  # started by helm_guard for install and upgrade
        body = _release_json(render.output(), operation)
        pending = record_of(record_name(str(body.get("name")), int(body.get("version", 0))), body)
        if pending.operation is None:
            raise LoadError(f"helm {operation} --dry-run: the release is {pending.status}")
        if pending.operation == "install" and operation is HelmOperation.install:
            pending = _with_crds_dir(pending, args)
        elif crds_dir_names(body):
            typer.echo(
                f"helm guard: the chart's crds/ holds {len(crds_dir_names(body))} file(s), which"
                f" helm {operation} never applies: check them with `helm guard crds CHART"
                " --version V` before the kubectl apply the chart's docs prescribe",
                err=True,
            )
        current = None
    namespace = str(body.get("namespace") or "")
    chart = pending.crds(normalize=True)
    _say_rendered(chart, "the release record" if operation is HelmOperation.rollback
                  else f"helm {operation} --dry-run=server with your flags")  # fmt: skip
    job = guard_job(f"release {pending.chart}", body)
    version = str(body.get("chart", {}).get("metadata", {}).get("version", ""))
    prepared, adopted = _prepared(job, chart, version, policy, accept, scratch)
    reach = replace(reach, asked=Asked(plugin=True, in_values=adopted, revision=restores))
    release = pipeline.Rendered(namespace, str(body.get("name")), pending, current)
    request = pipeline.Request(prepared, f"pre-{pending.operation}", release, in_helm=False)
    # The checks' deadline, as the hook's, from when they start: helm's render is not theirs.
    now = time.monotonic()
    reach = replace(reach, deadline=now + hook.DEFAULT_TIMEOUT, started=now)
    api.deadline = reach.deadline
    return hook.report(request, reach, api)


SHOWN_DIGESTS = 20  # CRDs named with their spec digests on standard error


def _say_rendered(crds: Mapping[str, Crd], source: str) -> None:
    """What is judged, on standard error: each CRD's name and spec digest (no values), so
    the render can be told apart from another without showing it."""
    digests = sorted(history.digests_of(crds).items())
    typer.echo(f"helm guard: judging {len(digests)} CRDs from {source}", err=True)
    for name, digest in digests[:SHOWN_DIGESTS]:
        typer.echo(f"helm guard:   {name} {digest}", err=True)
    if len(digests) > SHOWN_DIGESTS:
        typer.echo(f"helm guard:   ... and {len(digests) - SHOWN_DIGESTS} more", err=True)


def _revision_of(body: Mapping[str, Any]) -> int | None:
    revision = body.get("version")
    return revision if isinstance(revision, int) else None


def _chart_version(args: list[str]) -> str:
    """The version of the chart ``helm show crds ARGS`` shows (``helm show chart``), which
    acceptances name."""
    shown = [
        doc.body
        for doc in documents_of("helm show chart", helm_output("show", "chart", *args).encode())
    ]
    version = shown[0].get("version") if shown and isinstance(shown[0], dict) else None
    if not isinstance(version, str) or not version:
        raise LoadError(f"helm show chart {' '.join(args)}: no version")
    return version


def _with_crds_dir(pending: Record, args: list[str]) -> Record:
    """The install's record with the chart's crds/ files first: Helm 4 applies them before
    the manifest, server-side, over a live CRD too. Not with --skip-crds, nor with
    --server-side=false, where Helm creates only the missing ones (new: nothing stored)."""
    if "--skip-crds" in args or "--server-side=false" in args:
        return pending
    stream = helm_output("template", *args, "--include-crds")
    files = "".join(f"---\n{text}" for _, text in crds_dir_files(stream))
    return replace(pending, manifest=files + pending.manifest)


def _rollback(args: list[str], api: Api) -> tuple[Record, Record, Mapping[str, Any]]:
    """The rollback's pending record (the target revision's manifest, chart and hooks, at the
    revision Helm would give it), the record it replaces (the last one), and the target's
    release JSON. RELEASE and REVISION are the first two arguments that are not flags."""
    positional = [arg for arg in args if not arg.startswith("-")]
    if not positional:
        raise options.UsageProblem("helm guard rollback RELEASE [REVISION]")
    release = positional[0]
    namespace = os.environ.get("HELM_NAMESPACE") or "default"
    history_json = helm_output("history", release, "--max", "1", "--output", "json")
    try:
        last = int(json.loads(history_json)[-1]["revision"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise LoadError(f"helm history {release}: no revision") from None
    wanted = positional[1] if len(positional) > 1 else str(last - 1)
    target = options.canonical_option("REVISION", wanted) if wanted != "0" else last - 1
    from upgrade_guard.cluster.client import ClusterError

    records = pipeline.ReleaseRecords(api, release, namespace)
    try:
        body = records.body(target)
        current = records.record(last)
    except ClusterError as error:
        options.fail(ExitCode.CLUSTER_UNREACHABLE, str(error))
    if body is None or current is None:
        missing = target if body is None else last
        raise LoadError(f"release {release} has no revision {missing} in namespace {namespace}")
    pending = replace(
        record_of(record_name(release, target), body),
        name=record_name(release, last + 1),
        revision=last + 1,
        status="pending-rollback",
    )
    return pending, current, {**body, "namespace": namespace}


def _check_crds(
    args: list[str],
    policy: str | None,
    accept: list[str],
    reach: hook.Reach,
    api: Api,
    scratch: Path,
) -> ExitCode:
    """The chart's crds/ against the live CRDs, as the kubectl apply would change them."""
    shown = helm_output("show", "crds", *args)
    bundle = scratch / "crds.yaml"
    bundle.write_text(shown)
    _say_rendered(crds_from(documents_of("helm show crds", shown.encode())), "helm show crds")
    version = _chart_version(args)
    given = Inputs(policy=policy, crds=str(bundle), accept=tuple(accept), chart_version=version)
    prepared = hook.prepare(given)
    reach = replace(reach, asked=Asked(plugin=True, in_values=False))
    request = pipeline.Request(prepared, "kubectl apply", in_helm=False)
    return hook.report(request, reach, api)
