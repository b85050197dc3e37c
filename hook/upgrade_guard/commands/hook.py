"""`upgrade-guard hook`: the check a chart runs before it installs, upgrades or rolls back.

Order: the chart's own inputs (exit 2 when unusable), the chart/image pairing (needs no
cluster), then the cluster reads inside one deadline (exit 3 when they fail), then the
engine and the counters against what is live. The report goes to stdout, its summary to
the termination log. ``--fail-open`` lets the upgrade through when the guard cannot decide
(cluster unreachable or unreadable, or a bug), and says so loudly; never past a refusal.
"""

from __future__ import annotations

import enum
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from upgrade_guard import engine
from upgrade_guard.commands import options
from upgrade_guard.counters import history, live
from upgrade_guard.crd import Crd, Source, stamped_number
from upgrade_guard.findings import ExitCode, Outcome
from upgrade_guard.judging import Changes, Context, judge
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, Document, LoadError, load_documents
from upgrade_guard.load.image_table import read_image_table
from upgrade_guard.policy import CONTROLLER_STATE_VERSION, Policy, PolicyError
from upgrade_guard.report import REPORTERS
from upgrade_guard.report import hook as hook_report
from upgrade_guard.subjects import HookSubject, WrittenState

TERMINATION_LOG_ENV = "UPGRADE_GUARD_TERMINATION_LOG"
DEFAULT_TERMINATION_LOG = "/dev/termination-log"
DEFAULT_TIMEOUT = 60.0
DEFAULT_EVIDENCE_LIMIT = 10_000


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

    def write(self, text: str) -> None:
        if self.path is None:
            return
        try:
            self.path.write_text(hook_report.fit(text))
        except OSError as error:
            typer.echo(f"upgrade-guard: cannot write {self.path}: {error.strerror}", err=True)


def _chart_counters(
    given: Mapping[str, str], chart: Mapping[str, Crd], policy: Policy
) -> dict[str, int]:
    """--counter values, else the value every chart CRD is stamped with."""
    names = {CONTROLLER_STATE_VERSION, *(c.name for c in policy.counters)}
    counters: dict[str, int] = {}
    for name in sorted(names):
        key = policy.annotation(name)
        if key in given:
            counters[name] = int(given[key])
            continue
        stamped = {stamped_number(crd, key) for crd in chart.values()}
        if len(stamped) == 1 and None not in stamped:
            counters[name] = int(stamped.pop() or 0)
    return counters


def _controller_images(given: list[str]) -> dict[str, str]:
    """``SLOT=IMAGE`` or ``IMAGE`` (slot ``image``) -> {slot: image}; a slot once."""
    images: dict[str, str] = {}
    for item in given:
        slot, _, image = item.rpartition("=")
        slot = slot or live.DEFAULT_SLOT
        if not image.strip() or slot in images:
            raise options.UsageProblem(
                f"--controller-image {item}: expected SLOT=IMAGE or IMAGE, each slot once"
            )
        images[slot] = image
    return images


def _cannot_decide(code: ExitCode, message: str, fail_open: bool, log: TerminationLog) -> NoReturn:
    if fail_open:
        warning = (
            "upgrade-guard FAILED OPEN: the guard could not decide and --fail-open lets this"
            f" release through UNCHECKED: {message}"
        )
        typer.echo(warning)
        typer.echo(warning, err=True)
        log.write(warning + "\n")
        raise typer.Exit(int(ExitCode.SAFE))
    log.write(f"upgrade-guard CANNOT DECIDE (exit {int(code)}): {message}\n")
    options.fail(code, message)


def _emit(
    outcome: Outcome,
    phase: Phase,
    checked: int,
    output: str,
    footer: str,
    log: TerminationLog,
) -> NoReturn:
    if output == "text":
        sys.stdout.write(hook_report.render(outcome, phase.value, checked, footer))
    else:
        sys.stdout.write(REPORTERS[output](outcome))
    log.write(hook_report.termination_summary(outcome, phase.value, checked))
    raise typer.Exit(int(outcome.exit_code))


@options.guarded
def hook(
    crds: Annotated[
        str,
        typer.Option(help="The chart's CRDs: a directory of YAML/JSON, or a gzip bundle."),
    ],
    phase: Annotated[Phase, typer.Option(help="The Helm hook event (wording only).")] = (
        Phase.pre_upgrade
    ),
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
    evidence_limit: Annotated[
        int,
        typer.Option(
            help="Stored objects judged per resource for evidence (0: no evidence).", min=0
        ),
    ] = DEFAULT_EVIDENCE_LIMIT,
) -> None:
    """Check the chart's CRDs and counters against the live cluster; exit 0, 1, 2 or 3."""
    started = time.monotonic()
    log = TerminationLog(termination_log)
    try:
        chosen = options.policy_from(policy)
        # Kept as the digest sees them (the apiserver's defaults, no documentation): that is
        # what the checks compare and the evidence judges by, and the documents' own copy,
        # the larger one, is let go at once.
        chart = history.normalized(crds_from(load_documents(crds, max_bytes)))
        if not chart:
            raise LoadError(f"{crds}: no CustomResourceDefinitions")
        if (controller_image is None) != (image_table is None):
            raise options.UsageProblem("--controller-image and --image-table go together")
        if timeout <= 0:
            raise options.UsageProblem("--timeout must be positive")
        subject = live.subject_for(
            chosen,
            chart,
            _chart_counters(options.counter_options(counter, chosen), chart, chosen),
            _controller_images(controller_image or []),
            read_image_table(image_table) if image_table else None,
        )
    except (LoadError, PolicyError, options.UsageProblem) as error:
        log.write(f"upgrade-guard BAD INPUT (exit 2): {error}\n")
        raise
    # Before the cluster is read only the pairing of chart and images can refuse; the
    # schemas are not compared yet, so no declared break is used or unused.
    paired = judge(Changes(tuple(live.hook_changes(subject))), replace(chosen, declared_breaks=()))
    if not paired.safe:
        _emit(paired, phase, len(chart), output, "", log)
    # Imported here: the kubernetes client takes a third of a second to import, and only the
    # hook talks to a cluster.
    from upgrade_guard.cluster.client import ClusterError

    try:
        cluster = _read_cluster(
            chart, chosen, kubeconfig=kubeconfig, context=context, deadline=started + timeout
        )
        subject = replace(subject, live=cluster.crds, written_state=cluster.written_state)
        outcome = _judge(subject, chosen, cluster.server_version)
        if evidence_limit and outcome.findings:
            outcome = _with_evidence(
                outcome,
                chart,
                cluster.crds,
                cluster.server_version,
                chosen,
                kubeconfig=kubeconfig,
                context=context,
                deadline=started + timeout,
                limit=evidence_limit,
            )
    except ClusterError as error:
        _cannot_decide(ExitCode.CLUSTER_UNREACHABLE, str(error), fail_open, log)
    except typer.Exit:
        raise
    except Exception as error:  # a bug: fail closed unless told otherwise
        if not fail_open:
            log.write(f"upgrade-guard INTERNAL ERROR (exit 4): {type(error).__name__}\n")
            raise
        _cannot_decide(
            ExitCode.INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}", True, log
        )
    major, minor = cluster.server_version
    footer = (
        f"read {len(cluster.crds)} live of {len(chart)} chart CRDs from Kubernetes"
        f" {major}.{minor} in {cluster.requests} requests; {time.monotonic() - started:.1f}s"
    )
    _emit(outcome, phase, len(chart), output, footer, log)


@dataclass(frozen=True)
class _Cluster:
    server_version: tuple[int, int]
    crds: dict[str, Crd]  # the chart's CRDs the cluster has, by name, normalized
    written_state: list[WrittenState]
    requests: int


def _read_cluster(
    chart: Mapping[str, Crd],
    policy: Policy,
    *,
    kubeconfig: str | None,
    context: str | None,
    deadline: float,
) -> _Cluster:
    """The server version, the chart's CRDs the cluster has, and the state written in the
    cluster: read raw inside one deadline, made sense of here."""
    from upgrade_guard.cluster.client import Api, ClusterError, load_configuration
    from upgrade_guard.cluster.state import values_at

    with Api(load_configuration(kubeconfig, context), deadline) as api:
        version = api.server_version()
        documents = [
            Document(Source(f"cluster: customresourcedefinitions/{name}"), 0, body)
            for name, body in api.get_crds(chart).items()
            if body is not None
        ]
        try:
            crds = crds_from(documents, validate=False)
        except LoadError as error:
            raise ClusterError(f"cannot read a live CRD: {error}") from None
        written = live.live_state(crds, policy)
        for location in policy.stored_state:
            at = live.stored_state_version(location, crds)
            if at is None:
                continue
            for holder, value in values_at(api, location.group, at, location.plural, location.path):
                state = live.written_in(location, holder, value)
                if state is None:
                    raise ClusterError(
                        f"{location.resource} {holder}: {'.'.join(location.path)} is not a"
                        " canonical positive decimal, so the state version it holds cannot be"
                        " read"
                    )
                written.append(state)
        return _Cluster(version, history.normalized(crds), written, api.attempts)


def _with_evidence(
    outcome: Outcome,
    chart: Mapping[str, Crd],
    live_crds: Mapping[str, Crd],
    server_version: tuple[int, int],
    policy: Policy,
    *,
    kubeconfig: str | None,
    context: str | None,
    deadline: float,
    limit: int,
) -> Outcome:
    """Evidence from stored objects for the data-dependent findings. Imported here: the CEL
    runtime takes a while to load, and a safe upgrade never needs it."""
    from upgrade_guard.validation import evidence

    if not any(f.code in evidence.DATA_RULES for f in outcome.findings):
        return outcome
    from upgrade_guard.cluster.stored import stored_objects

    with stored_objects(
        kubeconfig=kubeconfig, context=context, deadline=deadline, limit=limit
    ) as list_stored:
        return evidence.with_evidence(
            outcome,
            chart,
            live_crds,
            server_version,
            strict=policy.strict,
            list_stored=list_stored,
        )


def _judge(subject: HookSubject, policy: Policy, server_version: tuple[int, int]) -> Outcome:
    """Every check of the chart against the cluster, judged once."""
    compared = engine.changes_between(subject.live, subject.chart, policy)
    release = history.release_of(policy, subject.live, subject.chart)
    return judge(
        replace(compared, raw=tuple(live.hook_changes(subject)) + compared.raw),
        policy,
        Context(server_version, release),
    )
