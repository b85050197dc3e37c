"""`upgrade-guard hook`: the check a chart runs before it installs, upgrades or rolls back.

Order: the chart's own inputs (exit 2 when unusable), the chart/image pairing (needs no
cluster), then the cluster reads inside one deadline (exit 3 when they fail), then the
engine and the counters against what is live. The report goes to stdout, its summary to
the termination log. ``--fail-open`` lets the upgrade through when the guard cannot decide
(cluster unreachable or unreadable, or a bug), and says so loudly; never past a refusal.
"""

from __future__ import annotations

import enum
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from upgrade_guard.commands import options
from upgrade_guard.counters import hook_checks
from upgrade_guard.crd import Crd, Source
from upgrade_guard.findings import ExitCode, Outcome
from upgrade_guard.judging import Acceptance, Context, Release, judge
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, Document, LoadError, load_documents
from upgrade_guard.load.helm_record import Operation, Record, decode, find_operation, record_name
from upgrade_guard.load.image_table import read_image_table
from upgrade_guard.load.rendered import Item, manifests_from, manifests_of, noting_manifests
from upgrade_guard.manifests import (
    ADMISSION_GROUP,
    RBAC_GROUP,
    RESOURCES,
    Manifests,
    Role,
    WebhookConfiguration,
)
from upgrade_guard.policy import (
    CONTROLLER_STATE_VERSION,
    SCHEMA_VERSION,
    Policy,
    PolicyError,
    canonical_number,
    controllers_of,
)
from upgrade_guard.report import REPORTERS, hook_log
from upgrade_guard.rules import acceptance_unused
from upgrade_guard.subjects import (
    Controller,
    HookSubject,
    RoleSubject,
    Stored,
    WrittenState,
)
from upgrade_guard.validation import evidence

if TYPE_CHECKING:
    from upgrade_guard.cluster.client import Api

TERMINATION_LOG_ENV = "UPGRADE_GUARD_TERMINATION_LOG"
DEFAULT_TERMINATION_LOG = "/dev/termination-log"
DEFAULT_TIMEOUT = 60.0
DEFAULT_EVIDENCE_LIMIT = 10_000
CHART_ANNOTATION_PREFIX = "upgrade-guard.io/"  # the library's, on Chart.yaml
SHOWN_STORED = 5  # object names a deletion finding shows
# The live objects the hook reads by name besides CRDs, by resource: their API group.
LIVE_GROUPS = {
    "clusterroles": RBAC_GROUP,
    "validatingwebhookconfigurations": ADMISSION_GROUP,
    "mutatingwebhookconfigurations": ADMISSION_GROUP,
}


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


def _controller_images(given: list[str]) -> dict[str, str]:
    """``SLOT=IMAGE`` or ``IMAGE`` (slot ``image``) -> {slot: image}; a slot once."""
    images: dict[str, str] = {}
    for item in given:
        slot, _, image = item.rpartition("=")
        slot = slot or hook_checks.DEFAULT_SLOT
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
    phase: str,
    checked: int,
    reach: Reach,
    footer: str = "",
    chart_version: str | None = None,
) -> NoReturn:
    if reach.output == "text":
        report = hook_log.render(
            outcome, phase, checked, footer, reach.limit, chart_version, reach.accepting
        )
        sys.stdout.write(report)
    else:
        sys.stdout.write(REPORTERS[reach.output](outcome))
    reach.log.write(hook_log.termination_summary(outcome, phase, checked))
    raise typer.Exit(int(outcome.exit_code))


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
    if rendered is None:
        if not chart:
            raise LoadError(f"{crds}: no CustomResourceDefinitions")
        return chart
    missing = sorted(rendered - chart.keys())
    if missing:
        raise LoadError(
            f"{crds}: the chart renders {', '.join(missing)}, which the bundle lacks: pack it"
            " again from the chart's rendered CRDs (upgrade-guard pack)"
        )
    return {name: crd for name, crd in chart.items() if name in rendered}


def _written_by(record: Record | None) -> list[WrittenState]:
    """The state the replaced release's controller writes, by its chart's annotation."""
    if record is None:
        return []
    value = record.chart_annotations.get(CHART_ANNOTATION_PREFIX + CONTROLLER_STATE_VERSION)
    number = canonical_number(value) if value is not None else None
    if number is None:
        return []
    return [WrittenState(number, f"release {record.chart} (revision {record.revision})")]


def _controllers_of(record: Record | None) -> Mapping[str, Controller]:
    """What each CRD's controller handles, as the policy the record's guard ran with
    declares it."""
    if record is None:
        return {}
    where = f"release {record.chart} (revision {record.revision}): its guard's policy"
    return controllers_of(record.guard_policy, where)


def _adopted(record: Record | None) -> bool:
    """Whether the replaced release already ran the guard (its hooks hold the Job)."""
    return record is not None and any(
        hook.startswith("Job/") and hook.endswith("-upgrade-guard") for hook in record.hooks
    )


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
    ] = DEFAULT_EVIDENCE_LIMIT,
) -> None:
    """Check the chart's CRDs and counters against the live cluster; exit 0, 1, 2 or 3."""
    reach = Reach(
        kubeconfig=kubeconfig,
        context=context,
        deadline=time.monotonic() + timeout,
        log=TerminationLog(termination_log),
        fail_open=fail_open,
        evidence_limit=evidence_limit,
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
            policy=policy,
            crds=crds,
            crd_names=crd_names,
            rendered_crds=rendered_crds,
            counter=counter,
            controller_image=controller_image,
            image_table=image_table,
            accept=accept,
            chart_version=chart_version,
            max_bytes=max_bytes,
            live_objects=live_objects,
        )
    except (LoadError, PolicyError, options.UsageProblem) as error:
        reach.log.write(f"upgrade-guard BAD INPUT (exit 2): {error}\n")
        raise

    # Imported here: the kubernetes client takes a third of a second to import, and only the
    # hook talks to a cluster.
    from upgrade_guard.cluster.client import Api

    def read_operation(api: Api) -> Operation | None:
        if release is None or namespace is None:
            return None
        return _read_operation(api, namespace, release, revision)

    where = f"for {release} at or above revision {revision} (not run by Helm?)"
    with Api(kubeconfig, context, reach.deadline) as api:
        check(prepared, reach, api, phase.value, read_operation, namespace or "", where)


@dataclass(frozen=True)
class Prepared:
    """The hook's own inputs, read and checked before the cluster is (exit 2 when unusable):
    the policy, the chart side of the checks as far as it is known, the CRD bundle (and
    the roles and webhook configurations it holds when it is a rendered chart, made sense
    of only without a release record), the CRDs and live objects the chart lists, and the
    cluster admin's acceptances."""

    policy: Policy
    subject: HookSubject
    bundled: dict[str, Crd] | None
    listed: set[str] | None
    readable: set[str] | None
    admin: Context
    bundled_manifests: tuple[Item, ...] = ()


def prepare(
    *,
    policy: str | None,
    crds: str | None,
    crd_names: str | None,
    rendered_crds: str | None,
    counter: list[str] | None,
    controller_image: list[str] | None,
    image_table: str | None,
    accept: list[str] | None,
    chart_version: str | None,
    max_bytes: int,
    live_objects: str | None = None,
    chart: Mapping[str, Crd] | None = None,
) -> Prepared:
    """The hook's options read as the checks use them. ``chart``: the CRDs this release
    applies when known before the cluster is read (the plugin's render), else the bundle's."""
    chosen = options.policy_from(policy)
    listed = _names(crd_names)
    # Kept as the digest sees them (the apiserver's defaults, no documentation): that is
    # what the checks compare and the evidence judges by, and the documents' own copy,
    # the larger one, is let go at once.
    bundled_manifests: list[Item] = []
    bundled = _bundle(crds, _names(rendered_crds), max_bytes, bundled_manifests)
    if (controller_image is None) != (image_table is None):
        raise options.UsageProblem("--controller-image and --image-table go together")
    given = options.counter_options(counter, chosen)
    acceptances = _acceptances(accept or [], chart_version)
    known = chart if chart is not None else bundled or {}
    subject = hook_checks.subject_for(
        chosen,
        known,
        given,
        _controller_images(controller_image or []),
        read_image_table(image_table) if image_table else None,
    )
    admin = Context(chart_version=chart_version, acceptances=acceptances)
    readable = _names(live_objects)
    return Prepared(chosen, subject, bundled, listed, readable, admin, tuple(bundled_manifests))


@dataclass(frozen=True)
class Reach:
    """How the checks reach the cluster, inside one deadline, and where they report."""

    kubeconfig: str | None
    context: str | None
    deadline: float
    log: TerminationLog
    fail_open: bool
    evidence_limit: int
    output: str
    limit: int = hook_log.LOG_LIMIT  # the text report's bytes (Helm prints the log as one line)
    accepting: str = hook_log.ACCEPT_BY_VALUES
    started: float = field(default_factory=time.monotonic)


def check(
    prepared: Prepared,
    reach: Reach,
    api: Api,
    phase: str,
    read_operation: Callable[[Api], Operation | None],
    namespace: str,
    no_record: str,
    *,
    in_helm: bool = True,
) -> NoReturn:
    """Every check of the chart against the cluster, reported, exiting with the verdict's
    code, every read through the one session ``api``. ``read_operation`` gives the pending
    release and the one it replaces (None
    without a release record: the bundle is judged, said ``no_record`` when there is none).
    ``in_helm``: run as Helm's own hook, the pending record written (the plugin runs before
    Helm): a release the guard did not run for is adopted now (UG606), and a refused
    rollback's way out is the pending record's deletion."""
    chosen, subject, admin, log = prepared.policy, prepared.subject, prepared.admin, reach.log
    bundled, listed, chart_version = prepared.bundled, prepared.listed, admin.chart_version
    # Before the cluster is read only the pairing of chart and images can refuse; the
    # schemas are not compared yet, so no declared break or acceptance is used or unused.
    paired = judge(hook_checks.changes(subject), replace(chosen, declared_breaks=()), admin)
    unused = acceptance_unused.RULE.code
    paired = replace(paired, findings=tuple(f for f in paired.findings if f.code != unused))
    from upgrade_guard.cluster.client import ClusterError

    fail_open = reach.fail_open
    operation: Operation | None = None
    try:
        operation = read_operation(api)
    except ClusterError as error:
        if not paired.safe:
            _emit(paired, phase, len(bundled or {}), reach, "", chart_version)
        _cannot_decide(ExitCode.CLUSTER_UNREACHABLE, str(error), fail_open, log)
    operation_name = f"pre-{operation.pending.operation}" if operation else phase
    try:
        # The CRDs this release applies: the pending record's under Helm, else the bundle's.
        chart = operation.pending.crds(normalize=True) if operation else bundled
        if chart is None:
            raise LoadError(
                f"no pending Helm release record {no_record} and no CRD bundle (--crds): ship"
                " the bundle for Argo CD"
            )
        replaced = operation.current if operation else None
        dropped = sorted(_applied(replaced) - chart.keys()) if replaced else []
        contracts = (
            operation.pending.manifests() if operation
            else manifests_of(prepared.bundled_manifests)
        )  # fmt: skip
        replaced_roles = replaced.manifests().roles if replaced else {}
        counter_keys = _counter_keys(chosen)
        wanted = _live_wanted(contracts, counter_keys, prepared.readable)
        unreadable = sorted(set(dropped) - listed) if listed is not None else []
        if replaced and unreadable:
            raise LoadError(
                f"release {replaced.chart} applies {', '.join(unreadable)}, which this release"
                " does not and Chart.yaml's upgrade-guard.io/crds does not list: list it there,"
                " so the guard may read what Helm would delete"
            )
        replaced_controllers = _controllers_of(replaced)
    except (LoadError, PolicyError) as error:
        log.write(f"upgrade-guard BAD INPUT (exit 2): {error}\n")
        raise
    if not paired.safe:
        _emit(paired, operation_name, len(chart), reach, "", chart_version)
    try:
        cluster = _read_cluster(api, [*chart, *dropped], wanted, chosen)
        live_crds = {n: c for n, c in cluster.crds.items() if n in chart}
        gone = {name: cluster.crds.get(name) for name in dropped}
        stored = _count_stored(api, {n: c for n, c in gone.items() if c is not None})
        described = f"release {replaced.chart} (revision {replaced.revision})" if replaced else ""
        subject = replace(
            subject,
            chart=chart,
            live=live_crds,
            written_state=[*cluster.written_state, *_written_by(replaced)],
            replaced=described,
            adopted=not in_helm or _adopted(replaced),
            dropped=gone,
            stored=stored,
            replaced_controllers=replaced_controllers,
            webhooks=_carrying(contracts.webhooks, counter_keys),
            live_webhooks=cluster.manifests.webhooks,
            counter_keys=counter_keys,
            roles=RoleSubject(
                after=contracts.roles,
                before=replaced_roles,
                before_label=described,
                live=cluster.manifests.roles,
            ),
        )
        # Compared, the stored objects the changes and the hook's checks need read, run and
        # judged once, the evidence put on the findings.
        compared = hook_checks.compared_with_live(subject, chosen)
        release = Release.between(live_crds, chart, chosen.annotation(SCHEMA_VERSION))
        judged = replace(admin, kube_version=cluster.server_version, release=release)
        gathered = evidence.Gathered(
            compared, subject, cluster.server_version, strict=chosen.strict,
            evidence=reach.evidence_limit > 0,
        )  # fmt: skip
        if gathered.crds:
            from upgrade_guard.cluster.stored import StoredAt, stored_objects

            live = [subject.live[name] for name in gathered.crds]
            stored_at = [
                StoredAt(
                    str(c.spec.get("group", "")), c.storage_version, str(c.names.get("plural", ""))
                )
                for c in live
            ]
            listings = stored_objects(api, stored_at, reach.evidence_limit)
            for name, listing in zip(gathered.crds, listings, strict=True):
                for obj in listing:
                    gathered.add(name, obj)
                gathered.listed(name, evidence.Listed(listing.complete, listing.problem))
        subject = replace(subject, carried=gathered.carried)
        outcome = gathered.applied(judge(hook_checks.changes(subject, compared), chosen, judged))
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
        f"read {len(live_crds)} live of {len(chart)} chart CRDs from Kubernetes"
        f" {major}.{minor} in {api.attempts} requests;"
        f" {time.monotonic() - reach.started:.1f}s"
    )
    if in_helm and operation is not None and not outcome.safe:
        footer = "\n".join([*_rollback_way_out(operation, namespace), footer])
    _emit(outcome, operation_name, len(chart), reach, footer, chart_version)


def _applied(record: Record) -> set[str]:
    """The CRDs a record's manifest applies, by name."""
    return set(record.crds())


def _rollback_way_out(operation: Operation, namespace: str) -> list[str]:
    """Helm leaves a refused rollback's record pending, never applied: every upgrade is then
    refused as "another operation is in progress", and `helm rollback` to the deployed
    revision diffs against that record (on a chart whose revisions differ in objects it
    fails, "original object ... not found"). Deleting the record restores the state before
    the rollback (tests/cluster/test_cert_manager.py)."""
    pending, current = operation.pending, operation.current
    if pending.operation != "rollback" or current is None:
        return []
    return [
        f"way out of this rollback: Helm keeps revision {pending.revision} pending-rollback,"
        f" never applied; `kubectl delete secret -n {namespace} {pending.name}` leaves the"
        f" release at revision {current.revision} ({current.chart}, {current.status}), as"
        " before the rollback; then upgrade as usual"
    ]


def _read_operation(api: Api, namespace: str, release: str, revision: int) -> Operation | None:
    """The pending release record and the one it replaces; None when not run by Helm."""
    from upgrade_guard.cluster.client import ClusterError
    from upgrade_guard.cluster.release_records import release_secret

    def fetch(number: int) -> Record | None:
        name = record_name(release, number)
        body = release_secret(api, namespace, name)
        return None if body is None else decode(name, body)

    try:
        return find_operation(revision, fetch)
    except LoadError as error:
        raise ClusterError(str(error)) from None


def _count_stored(api: Api, crds: Mapping[str, Crd]) -> dict[str, Stored]:
    """How many objects each live CRD stores, and the first few names."""
    from upgrade_guard.cluster.release_records import stored_names

    counted: dict[str, Stored] = {}
    for name, crd in crds.items():
        version = crd.storage_version or next(iter(crd.served_versions), None)
        if version is None:
            continue
        group, plural = str(crd.spec.get("group", "")), str(crd.names.get("plural", ""))
        counted[name] = Stored(*stored_names(api, group, version, plural, SHOWN_STORED))
    return counted


def _counter_keys(policy: Policy) -> dict[str, str]:
    """Each counter's annotation: controller-state-version and the policy's."""
    names = {CONTROLLER_STATE_VERSION, *(c.name for c in policy.counters)}
    return {name: policy.annotation(name) for name in sorted(names)}


def _carrying(
    webhooks: Mapping[str, WebhookConfiguration], counter_keys: Mapping[str, str]
) -> dict[str, WebhookConfiguration]:
    """The webhook configurations that carry a counter."""
    return {
        key: webhook
        for key, webhook in webhooks.items()
        if any(annotation in webhook.annotations for annotation in counter_keys.values())
    }


def _live_wanted(
    contracts: Manifests, counter_keys: Mapping[str, str], readable: set[str] | None
) -> dict[str, list[str]]:
    """The live objects to read, by resource: the ClusterRoles this release renders and its
    webhook configurations that carry counters. Each must be among those the hook may read
    (--live-objects, the library's list from Chart.yaml), or it is bad input naming the
    annotation that grants it."""
    objects: list[Role | WebhookConfiguration] = [
        *(r for r in contracts.roles.values() if r.kind == "ClusterRole"),
        *_carrying(contracts.webhooks, counter_keys).values(),
    ]
    wanted: dict[str, list[str]] = {}
    for item in objects:
        resource = RESOURCES[item.kind]
        if readable is not None and f"{resource}/{item.name}" not in readable:
            annotation = "rbac-templates" if isinstance(item, Role) else "webhook-templates"
            raise LoadError(
                f"this release renders the {item.kind} {item.name}, which the guard may not"
                f" read: name the template that renders it in Chart.yaml's"
                f" {CHART_ANNOTATION_PREFIX}{annotation}, so the library grants `get` on it"
            )
        wanted.setdefault(resource, []).append(item.name)
    return wanted


@dataclass(frozen=True)
class _Cluster:
    server_version: tuple[int, int]
    crds: dict[str, Crd]  # the chart's CRDs the cluster has, by name, normalized
    written_state: list[WrittenState]
    manifests: Manifests  # the live ClusterRoles and webhook configurations read


def _read_cluster(
    api: Api, names: Iterable[str], objects: Mapping[str, list[str]], policy: Policy
) -> _Cluster:
    """The server version, the named CRDs the cluster has, the state written in the
    cluster, and the named live objects (``objects``: names by resource): read raw, made
    sense of here."""
    from upgrade_guard.cluster.client import ClusterError
    from upgrade_guard.cluster.state import values_at

    version = api.server_version()
    documents = [
        Document(Source(f"cluster: customresourcedefinitions/{name}"), 0, body)
        for name, body in api.get_crds(names).items()
        if body is not None
    ]
    try:
        crds = crds_from(documents, validate=False, normalize=True)
    except LoadError as error:
        raise ClusterError(f"cannot read a live CRD: {error}") from None
    written = hook_checks.live_state(crds, policy)
    for location in policy.stored_state:
        at = hook_checks.stored_state_version(location, crds)
        if at is None:
            continue
        for holder, value in values_at(api, location.group, at, location.plural, location.path):
            state = hook_checks.written_in(location, holder, value)
            if state is None:
                raise ClusterError(
                    f"{location.resource} {holder}: {'.'.join(location.path)} is not a"
                    " canonical positive decimal, so the state version it holds cannot be"
                    " read"
                )
            written.append(state)
    found = [
        Document(Source(f"cluster: {resource}/{name}"), 0, body)
        for resource, wanted in sorted(objects.items())
        for name, body in api.get_named(
            f"/apis/{LIVE_GROUPS[resource]}/v1/{resource}",
            f"{resource}.{LIVE_GROUPS[resource]}",
            wanted,
        ).items()
        if body is not None
    ]
    try:
        manifests = manifests_from(found)
    except LoadError as error:
        raise ClusterError(f"cannot read a live object: {error}") from None
    return _Cluster(version, crds, written, manifests)
