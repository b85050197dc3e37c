"""`upgrade-guard hook`: the check a chart runs before it installs, upgrades or rolls back.

The options are read into the pipeline's request (exit 2 when unusable); the pipeline
(``pipelines/hook_run.py``) runs every check through one cluster session inside one deadline,
and its verdict is reported here: the report to stdout, its summary to the termination
log. ``--fail-open`` lets the upgrade through when the guard cannot decide (cluster
unreachable or unreadable, or a bug), and says so loudly; never past a refusal.
"""

from __future__ import annotations

import enum
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.crd import Crd
from upgrade_guard.findings import ExitCode, Outcome
from upgrade_guard.judging import Acceptance, Context
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError, load_documents
from upgrade_guard.load.image_table import read_image_table
from upgrade_guard.load.rendered import Item, noting_manifests
from upgrade_guard.pipelines import hook_run as pipeline
from upgrade_guard.policy import PolicyError
from upgrade_guard.report import REPORTERS, hook_log
from upgrade_guard.report.ways_out import APPLY, UNASKED, Asked

if TYPE_CHECKING:
    from upgrade_guard.cluster.client import Api

TERMINATION_LOG_ENV = "UPGRADE_GUARD_TERMINATION_LOG"
DEFAULT_TERMINATION_LOG = "/dev/termination-log"
DEFAULT_TIMEOUT = 60.0


class Phase(enum.StrEnum):
    pre_install = "pre-install"
    pre_upgrade = "pre-upgrade"
    pre_rollback = "pre-rollback"


class TerminationLog:
    """Kubernetes shows this file's content as the container's termination message. The
    default path is written only where it exists (in a container): never create it in /dev
    of a laptop."""

    def __init__(self, path: str | None) -> None:
        default = Path(DEFAULT_TERMINATION_LOG)
        self.path = Path(path) if path else default if default.exists() else None

    @classmethod
    def off(cls) -> TerminationLog:
        """No termination log: a run outside a hook's container."""
        log = cls(None)
        log.path = None
        return log

    def write(self, text: str) -> None:
        if self.path is None:
            return
        try:
            self.path.write_text(hook_log.fit(text))
        except OSError as error:
            typer.echo(f"upgrade-guard: cannot write {self.path}: {error.strerror}", err=True)


# The slot of an image passed without a name: the chart's `image` values.
DEFAULT_SLOT = "image"


def _controller_images(given: list[str]) -> dict[str, str]:
    """``SLOT=IMAGE`` or ``IMAGE`` (slot ``image``) -> {slot: image}; a slot once."""
    images: dict[str, str] = {}
    for item in given:
        slot, _, image = item.rpartition("=")
        slot = slot or DEFAULT_SLOT
        if not image.strip() or slot in images:
            raise options.UsageProblem(
                f"--controller-image {item}: expected SLOT=IMAGE or IMAGE, each slot once"
            )
        images[slot] = image
    return images


_ACCEPT_REQUIRED = ("chart", "code")
_ACCEPT_PLACE = ("crd", "version", "path")


def _acceptances(given: list[str], chart_version: str | None) -> tuple[Acceptance, ...]:
    """Each ``--accept`` JSON object as an Acceptance; anything else is bad input."""
    acceptances: list[Acceptance] = []
    for item in given:
        try:
            entry = json.loads(item)
        except json.JSONDecodeError as error:
            raise options.UsageProblem(f"--accept {item}: not JSON ({error.msg})") from None
        fields = entry if isinstance(entry, dict) else {}
        wrong = sorted(set(fields) - {*_ACCEPT_REQUIRED, *_ACCEPT_PLACE})
        required = all(isinstance(fields.get(k), str) and fields[k] for k in _ACCEPT_REQUIRED)
        optional = all(isinstance(fields.get(k, ""), str) for k in _ACCEPT_PLACE)
        if not fields or wrong or not required or not optional:
            unknown = f"; unknown keys: {', '.join(wrong)}" if wrong else ""
            raise options.UsageProblem(
                f"--accept {item}: expected an object with chart and code, and crd, version and"
                f" path where the finding has them (strings){unknown}"
            )
        acceptances.append(Acceptance(**{k: v for k, v in fields.items() if v}))
    if acceptances and not chart_version:
        raise options.UsageProblem("--accept needs --chart-version (the chart being installed)")
    return tuple(acceptances)


def _cannot_decide(code: ExitCode, message: str, fail_open: bool, log: TerminationLog) -> ExitCode:
    """No verdict: said as an error and exit ``code``, or under ``fail_open`` a loud pass."""
    if fail_open:
        warning = (
            "upgrade-guard FAILED OPEN: the guard could not decide and --fail-open lets this"
            f" release through UNCHECKED: {message}"
        )
        typer.echo(warning)
        typer.echo(warning, err=True)
        log.write(warning + "\n")
        return ExitCode.SAFE
    log.write(f"upgrade-guard CANNOT DECIDE (exit {int(code)}): {message}\n")
    typer.echo(f"upgrade-guard: error: {message}", err=True)
    return code


def _emit(
    outcome: Outcome, phase: str, checked: int, reach: Reach, asked: Asked, footer: str = ""
) -> ExitCode:
    if reach.output == "text":
        report = hook_log.render(outcome, phase, checked, footer, reach.limit, asked)
        sys.stdout.write(report)
    else:
        sys.stdout.write(REPORTERS[reach.output](outcome))
    reach.log.write(hook_log.termination_summary(outcome, phase, checked, asked))
    return outcome.exit_code


def _names(path: str | None) -> set[str] | None:
    """One name a line (the library's crds.txt and rendered-crds.txt)."""
    if path is None:
        return None
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise LoadError(f"{path}: {error.strerror}") from None
    return {line.strip() for line in text.splitlines() if line.strip()}


def _bundle(
    crds: str | None, rendered: set[str] | None, max_bytes: int, manifests: list[Item]
) -> dict[str, Crd] | None:
    """The chart's CRDs from --crds, only those this release renders when it says which;
    the roles and webhook configurations it holds go to manifests, read in the same pass
    (a second one held a second copy of a provider's bundle: 150 MiB)."""
    if crds is None:
        return None
    chart = crds_from(noting_manifests(load_documents(crds, max_bytes), manifests), normalize=True)
    if not chart:
        # Filtered to what this release renders or not, none would pass judging none.
        raise LoadError(
            f"{crds}: no CustomResourceDefinitions: give every CRD the chart may apply"
            " (upgrade-guard pack, from a render with every CRD switch on)"
        )
    if rendered is None:
        return chart
    missing = sorted(rendered - chart.keys())
    if missing:
        raise LoadError(
            f"{crds}: the chart renders {', '.join(missing)}, which the bundle lacks: pack it"
            " again from the chart's rendered CRDs (upgrade-guard pack)"
        )
    return {name: crd for name, crd in chart.items() if name in rendered}


@options.guarded
def hook(
    crds: Annotated[
        str | None,
        typer.Option(
            help="The chart's CRDs: a directory of YAML/JSON, or a gzip bundle (without a"
            " pending Helm release record, as under Argo CD)."
        ),
    ] = None,
    phase: Annotated[
        Phase, typer.Option(help="The Helm hook event (wording only, without a release record).")
    ] = Phase.pre_upgrade,
    release: Annotated[
        str | None,
        typer.Option(help="The Helm release: read what it applies from its release records."),
    ] = None,
    namespace: Annotated[
        str | None, typer.Option(help="The release's namespace (with --release).")
    ] = None,
    revision: Annotated[
        int, typer.Option(help="The revision the hook was rendered at (with --release).", min=1)
    ] = 1,
    crd_names: Annotated[
        str | None,
        typer.Option(help="File: the CRDs the chart lists (one a line), the hook may read."),
    ] = None,
    rendered_crds: Annotated[
        str | None,
        typer.Option(help="File: the CRDs this release renders (one a line); filters --crds."),
    ] = None,
    live_objects: Annotated[
        str | None,
        typer.Option(
            help="File: the live ClusterRoles and webhook configurations the hook may read,"
            " as RESOURCE/NAME (one a line; the library writes it). Default: every one this"
            " release renders."
        ),
    ] = None,
    counter: options.CounterOption = None,
    controller_image: Annotated[
        list[str] | None,
        typer.Option(
            help="A controller image these values deploy, as SLOT=IMAGE (SLOT: the values key"
            " that sets it, e.g. webhook.image) or IMAGE (slot `image`); once per image."
        ),
    ] = None,
    image_table: Annotated[
        str | None, typer.Option(help="The chart's table: image tag or digest -> counters.")
    ] = None,
    policy: options.PolicyOption = None,
    output: options.OutputOption = options.TEXT,
    timeout: Annotated[
        float, typer.Option(help="Seconds for every cluster read together.")
    ] = DEFAULT_TIMEOUT,
    termination_log: Annotated[
        str | None,
        typer.Option(
            envvar=TERMINATION_LOG_ENV,
            help=f"Where the summary goes [default: {DEFAULT_TERMINATION_LOG} if it exists].",
        ),
    ] = None,
    fail_open: Annotated[
        bool,
        typer.Option("--fail-open", help="Pass, loudly, when the guard cannot decide."),
    ] = False,
    kubeconfig: Annotated[str | None, typer.Option(help="Kubeconfig file.")] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context.")] = None,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
    accept: Annotated[
        list[str] | None,
        typer.Option(
            help="A finding the cluster admin accepts, as JSON: {chart, code, crd, version,"
            " path} (the values' upgrade-guard.accept); once per finding."
        ),
    ] = None,
    chart_version: Annotated[
        str | None, typer.Option(help="The chart version being installed (.Chart.Version).")
    ] = None,
    evidence_limit: Annotated[
        int,
        typer.Option(
            help="Stored objects read per resource, for evidence and for the finalizers and"
            " condition types they carry (0: no evidence).",
            min=0,
        ),
    ] = pipeline.DEFAULT_EVIDENCE_LIMIT,
) -> None:
    """Check the chart's CRDs and counters against the live cluster; exit 0, 1, 2 or 3."""
    reach = Reach(
        kubeconfig=kubeconfig,
        context=context,
        deadline=time.monotonic() + timeout,
        log=TerminationLog(termination_log),
        fail_open=fail_open,
        output=output,
    )
    try:
        if crds is None and release is None:
            raise options.UsageProblem("give --crds, or --release to read the release record")
        if (release is None) != (namespace is None):
            raise options.UsageProblem("--release and --namespace go together")
        if timeout <= 0:
            raise options.UsageProblem("--timeout must be positive")
        prepared = prepare(
            Inputs(
                policy=policy,
                crds=crds,
                crd_names=crd_names,
                rendered_crds=rendered_crds,
                live_objects=live_objects,
                counter=tuple(counter or ()),
                controller_image=tuple(controller_image or ()),
                image_table=image_table,
                accept=tuple(accept or ()),
                chart_version=chart_version,
                max_bytes=max_bytes,
            )
        )
    except (LoadError, PolicyError, options.UsageProblem) as error:
        reach.log.write(f"upgrade-guard BAD INPUT (exit 2): {error}\n")
        raise
    at = None
    if release is not None and namespace is not None:
        at = pipeline.RecordsAt(namespace, release, revision)
    request = pipeline.Request(prepared, phase.value, at, evidence_limit=evidence_limit)
    # Imported here: the kubernetes client takes a third of a second to import, and only the
    # hook talks to a cluster.
    from upgrade_guard.cluster.client import Api

    with Api(kubeconfig, context, reach.deadline) as api:
        code = report(request, reach, api)
    raise typer.Exit(int(code))


@dataclass(frozen=True)
class Inputs:
    """The hook's file and value options as given: on its command line, or in its Job's
    arguments, which the Helm plugin reads."""

    policy: str | None = None
    crds: str | None = None
    crd_names: str | None = None
    rendered_crds: str | None = None
    live_objects: str | None = None
    counter: tuple[str, ...] = ()
    controller_image: tuple[str, ...] = ()
    image_table: str | None = None
    accept: tuple[str, ...] = ()
    chart_version: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES


def prepare(given: Inputs, chart: Mapping[str, Crd] | None = None) -> pipeline.Prepared:
    """The hook's options read as the checks use them. ``chart``: the CRDs this release
    applies when known before the cluster is read (the plugin's render), else the bundle's."""
    chosen = options.policy_from(given.policy)
    listed = _names(given.crd_names)
    if listed == set():
        raise LoadError(
            f"{given.crd_names}: lists no CRD, and the hook may read only those listed: list"
            " every CRD a release of the chart may apply (the library lists Chart.yaml's"
            " upgrade-guard.io/crds)"
        )
    # Kept as the digest sees them (the apiserver's defaults, no documentation): that is
    # what the checks compare and the evidence judges by, and the documents' own copy,
    # the larger one, is let go at once.
    bundled_manifests: list[Item] = []
    bundled = _bundle(given.crds, _names(given.rendered_crds), given.max_bytes, bundled_manifests)
    if (not given.controller_image) != (given.image_table is None):
        raise options.UsageProblem("--controller-image and --image-table go together")
    counters = options.counter_options(list(given.counter), chosen)
    acceptances = _acceptances(list(given.accept), given.chart_version)
    known = chart if chart is not None else bundled or {}
    subject = pipeline.subject_for(
        chosen,
        known,
        counters,
        _controller_images(list(given.controller_image)),
        read_image_table(given.image_table) if given.image_table else None,
    )
    admin = Context(chart_version=given.chart_version, acceptances=acceptances)
    readable = _names(given.live_objects)
    return pipeline.Prepared(
        chosen, subject, bundled, listed, readable, admin, tuple(bundled_manifests)
    )


@dataclass(frozen=True)
class Reach:
    """How the checks reach the cluster, inside one deadline, and where they report."""

    kubeconfig: str | None
    context: str | None
    deadline: float
    log: TerminationLog
    fail_open: bool
    output: str
    limit: int = hook_log.LOG_LIMIT  # the text report's bytes (Helm prints the log as one line)
    asked: Asked = UNASKED  # the plugin's: the revision a rollback restores, how it accepts
    started: float = field(default_factory=time.monotonic)


def report(request: pipeline.Request, reach: Reach, api: Api) -> ExitCode:
    """Run the pipeline through the session ``api`` and report its verdict; its exit code:
    a cluster that could not be read 3, a bug 4 (raised), each passed, loudly, under
    --fail-open. Bad input is raised (exit 2)."""
    try:
        result = pipeline.run(request, api)
    except (LoadError, PolicyError) as error:
        reach.log.write(f"upgrade-guard BAD INPUT (exit 2): {error}\n")
        raise
    except Exception as error:  # a bug: fail closed unless told otherwise
        if not reach.fail_open:
            reach.log.write(f"upgrade-guard INTERNAL ERROR (exit 4): {type(error).__name__}\n")
            raise
        return _cannot_decide(
            ExitCode.INTERNAL_ERROR,
            f"internal error: {type(error).__name__}: {error}",
            True,
            reach.log,
        )
    if isinstance(result, pipeline.Undecided):
        return _cannot_decide(result.code, result.message, reach.fail_open, reach.log)
    footer = ""
    if result.unread:
        footer = f"only the chart and its images were checked: {result.unread}"
    if result.read:
        took = f"{result.read}; {time.monotonic() - reach.started:.1f}s"
        footer = "\n".join([*result.way_out, took])
    asked = _asked(request, result, reach)
    return _emit(result.outcome, result.operation, result.checked, reach, asked, footer)


def _asked(request: pipeline.Request, result: pipeline.Judged, reach: Reach) -> Asked:
    """What the person ran, for the commands the ways out print."""
    operation = result.operation.removeprefix("pre-")
    at = request.release
    revision = reach.asked.revision
    if isinstance(at, pipeline.RecordsAt) and operation == "rollback":
        revision = at.revision  # Helm runs the hooks of the revision it restores
    return replace(
        reach.asked,
        operation=APPLY if operation == "kubectl apply" else operation,
        release=at.release if at is not None else None,
        namespace=at.namespace if at is not None else None,
        chart_version=request.prepared.admin.chart_version,
        revision=revision,
    )
