"""The hook's checks as one pipeline: ``run(request, api)`` reads what it needs through one
cluster session and returns the verdict, in the order docs/hook.md gives:

1. the chart and its images (needs no cluster);
2. Helm's release records: the operation, the CRDs this release applies, the one it replaces;
3. the live reads: the server version, the chart's CRDs, the state written in the cluster,
   the roles and webhook configurations, the objects of the CRDs Helm would delete;
4. the engine, the hook's checks and the evidence from stored objects, judged once.

Every check runs in the one pass, so a refusal of the images hides none of the others. Bad
input raises LoadError or PolicyError (exit 2); what the cluster could not answer is
``Undecided`` (exit 3), unless the chart and its images already refuse: then that refusal
is the verdict, with what could not be read. Nothing here prints,
exits or knows the command line: the command and the Helm plugin build a ``Request`` and
report what ``run`` returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from upgrade_guard import engine, rules
from upgrade_guard.apiserver import minors
from upgrade_guard.crd import Crd, Source
from upgrade_guard.findings import ExitCode, Outcome
from upgrade_guard.images import ImageTable, SlotPairing
from upgrade_guard.judging import Changes, Context, judge
from upgrade_guard.judging import run as run_checks
from upgrade_guard.load.crds import check_at, costed_at, crds_from
from upgrade_guard.load.documents import Document, LoadError
from upgrade_guard.load.helm_record import (
    Operation,
    Record,
    body_of,
    decode,
    find_operation,
    record_name,
    record_of,
    replaced,
)
from upgrade_guard.load.rendered import Item, manifests_from, manifests_of
from upgrade_guard.manifests import (
    ADMISSION_GROUP,
    RBAC_GROUP,
    RESOURCES,
    Manifests,
    Role,
    WebhookConfiguration,
)
from upgrade_guard.pipelines import evidence
from upgrade_guard.policy import (
    CONTROLLER_STATE_VERSION,
    SCHEMA_VERSION,
    Policy,
    StoredState,
    canonical_number,
    controllers_of,
)
from upgrade_guard.rules import acceptance_unused
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import (
    Controller,
    CrdSets,
    HookSubject,
    Release,
    RoleSubject,
    Stored,
    WrittenState,
    stamped_number,
    stopped_handling,
)

if TYPE_CHECKING:
    from upgrade_guard.cluster.client import Api

DEFAULT_EVIDENCE_LIMIT = 10_000
_HOOK_CHECKS = rules.of_kind(HookCheck)
_UNLISTED = (
    "this release's guard may not read the CRD, which Chart.yaml's upgrade-guard.io/crds does"
    " not list (a release older than the CRD lists none of them), and the release that added"
    " it left no lasting grant to read it (its library is older); it is judged as the"
    " release Helm replaces applied it"
)
CHART_ANNOTATION_PREFIX = "upgrade-guard.io/"  # the library's, on Chart.yaml
SHOWN_STORED = 5  # object names a deletion finding shows
# The live objects the hook reads by name besides CRDs, by resource: their API group.
LIVE_GROUPS = {
    "clusterroles": RBAC_GROUP,
    "validatingwebhookconfigurations": ADMISSION_GROUP,
    "mutatingwebhookconfigurations": ADMISSION_GROUP,
}


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


@dataclass(frozen=True)
class RecordsAt:
    """Run as Helm's hook: the pending record is at or above the revision the hook was
    rendered at (a rollback runs an earlier revision's hooks)."""

    namespace: str
    release: str
    revision: int


@dataclass(frozen=True)
class Rendered:
    """Run by the Helm plugin before Helm: the pending record is Helm's dry run (or, for a
    rollback, the target revision's), and ``current`` the record a rollback replaces; an
    upgrade's is read by name."""

    namespace: str
    release: str
    pending: Record
    current: Record | None = None


@dataclass(frozen=True)
class Request:
    """One run of the checks. ``release``: where the operation is found, None without a
    release record (Argo CD, ``helm guard crds``: the bundle is judged). ``in_helm``: run as
    Helm's own hook, the pending record written: a release the guard did not run for is
    adopted now (UG606), and a refused rollback's way out is the pending record's deletion.
    ``phase`` names the operation where no record does."""

    prepared: Prepared
    phase: str
    release: RecordsAt | Rendered | None = None
    in_helm: bool = True
    evidence_limit: int = DEFAULT_EVIDENCE_LIMIT


@dataclass(frozen=True)
class Judged:
    """The verdict: the outcome, the operation it names, the chart CRDs checked, what was
    read and the way out of a refused rollback; or, where the chart and its images refuse
    and the cluster could not be read, that refusal and why the rest is ``unread``."""

    outcome: Outcome
    operation: str
    checked: int
    read: str = ""
    way_out: tuple[str, ...] = ()
    unread: str = ""


@dataclass(frozen=True)
class Undecided:
    """The cluster could not be reached or read: no verdict (exit 3)."""

    message: str
    code: ExitCode = ExitCode.CLUSTER_UNREACHABLE


def subject_for(
    policy: Policy,
    chart: Mapping[str, Crd],
    given_counters: Mapping[str, str],
    controller_images: Mapping[str, str],
    image_table: ImageTable | None,
) -> HookSubject:
    """What the hook's checks compare before the cluster is read: the counters the chart
    declares (``given_counters``: values by annotation, the hook's --counter; else the value
    every chart CRD is stamped with), each slot's image against those the policy pairs with
    the images (``controller-state-version`` always) by the image table, and the policy's
    annotation of the schema version."""
    chart_counters: dict[str, int] = {}
    for name, key in _counter_keys(policy).items():
        if key in given_counters:
            chart_counters[name] = int(given_counters[key])
            continue
        stamped = {stamped_number(crd, key) for crd in chart.values()}
        if len(stamped) == 1 and None not in stamped:
            chart_counters[name] = int(stamped.pop() or 0)
    paired = (CONTROLLER_STATE_VERSION, *(c.name for c in policy.counters if c.paired_with_image))
    wanted = {name: value for name in paired if (value := chart_counters.get(name))}
    pairings = (
        [SlotPairing(s, i, image_table, wanted) for s, i in sorted(controller_images.items())]
        if image_table is not None and wanted
        else []
    )
    return HookSubject(
        chart=chart,
        chart_counters=chart_counters,
        pairings=pairings,
        schema_key=policy.annotation(SCHEMA_VERSION),
        controllers=policy.controllers,
    )


def both_sides(chart: Mapping[str, Crd], live: Mapping[str, Crd]) -> list[tuple[str, Crd, Crd]]:
    """Each CRD the chart and the cluster both have: its name, the chart's, the live one."""
    return [(name, chart[name], live[name]) for name in sorted(chart.keys() & live.keys())]


def live_state(live: Mapping[str, Crd], policy: Policy) -> list[WrittenState]:
    """The controller-state versions stamped on the live CRDs."""
    key = policy.annotation(CONTROLLER_STATE_VERSION)
    found = ((name, stamped_number(crd, key)) for name, crd in sorted(live.items()))
    return [WrittenState(v, f"CRD {name} ({key})") for name, v in found if v is not None]


def run(request: Request, api: Api) -> Judged | Undecided:
    """Every check of the chart against the cluster, each read through ``api``."""
    from upgrade_guard.cluster.client import ClusterError

    prepared = request.prepared
    chosen, subject, admin = prepared.policy, prepared.subject, prepared.admin
    try:
        operation = _operation(api, request.release)
    except ClusterError as error:
        return _unread(prepared, request.phase, len(prepared.bundled or {}), str(error))
    named = f"pre-{operation.pending.operation}" if operation else request.phase
    # The CRDs this release applies: the pending record's under Helm, else the bundle's.
    chart = operation.pending.crds(normalize=True) if operation else prepared.bundled
    if chart is None:
        raise LoadError(
            f"no pending Helm release record {_no_record(request.release)} and no CRD bundle"
            " (--crds): ship the bundle for Argo CD"
        )
    current = operation.current if operation else None
    applied = current.crds() if current else {}  # read once: a provider's record is large
    dropped = sorted(applied.keys() - chart.keys())
    contracts = operation.pending.manifests() if operation else manifests_of(
        prepared.bundled_manifests
    )  # fmt: skip
    counter_keys = _counter_keys(chosen)
    wanted = live_wanted(contracts, counter_keys, prepared.readable)
    # A CRD the chart does not list, its guard may not read: judged from the replaced
    # record (a rollback to a chart older than the CRD is the common case), never bad input.
    unlisted = set(dropped) - prepared.listed if prepared.listed is not None else set()
    replaced_controllers = _controllers_of(current)
    try:
        readable = [name for name in dropped if name not in unlisted]
        cluster = _read_cluster(api, [*chart, *readable], wanted, chosen)
        live_crds = {n: c for n, c in cluster.crds.items() if n in chart}
        # The chart's CRDs were checked as the newest apiserver checks them; now the
        # cluster's minor is known, what differs at it.
        judged_as, note = minors.judged_as(cluster.server_version)
        check_at(chart, live_crds, judged_as)
        costed_at(chart, judged_as)  # an older estimator: every rule costed as it costs
        gone = {name: cluster.crds.get(name) for name in readable}
        unread, unlisted_live = _unlisted(api, sorted(unlisted), applied)
        gone |= unlisted_live
        stored = _count_stored(api, {n: c for n, c in gone.items() if c is not None})
        stored |= {name: Stored(0, (), _UNLISTED) for name in unread}
        described = f"release {current.chart} (revision {current.revision})" if current else ""
        replaced_manifests = current.manifests() if current else Manifests()
        subject = replace(
            subject,
            chart=chart,
            live=live_crds,
            both=both_sides(chart, live_crds),
            written_state=[
                *live_state(cluster.crds, chosen),
                *cluster.stored_state,
                *_written_by(current),
            ],
            replaced=described,
            adopted=not request.in_helm or _adopted(current),
            admission_policy=replaced_manifests.admission_policy,
            dropped=gone,
            stored=stored,
            replaced_controllers=replaced_controllers,
            retired=stopped_handling(subject.controllers, replaced_controllers, chart, live_crds),
            webhooks=_carrying(contracts.webhooks, counter_keys),
            live_webhooks=cluster.manifests.webhooks,
            counter_keys=counter_keys,
            roles=RoleSubject(
                after=contracts.roles,
                before=replaced_manifests.roles,
                before_label=described,
                live=cluster.manifests.roles,
            ),
        )
        # Compared (the live CRDs against the chart's, the roles of the release against the
        # replaced release's and the live ones), the stored objects the changes and the
        # hook's checks need read, run and judged once, the evidence put on the findings.
        release = Release.between(live_crds, chart, chosen.annotation(SCHEMA_VERSION))
        crds = CrdSets.of(live_crds, chart, chosen.storage_version_only)
        compared = engine.changes(crds).merged(engine.role_changes(subject.roles))
        gathered = evidence.Gathered(
            compared, subject, cluster.server_version, strict=chosen.strict,
            evidence=request.evidence_limit > 0,
        )  # fmt: skip
        _gather(api, gathered, subject, request.evidence_limit)
        subject = replace(subject, carried=gathered.carried)
        judged = replace(
            admin, kube_version=cluster.server_version, release=release, evidence=gathered
        )
        outcome = judge(changes(subject, compared), chosen, judged)
        if note is not None:
            outcome = replace(outcome, facts=(*outcome.facts, ("note", note)))
    except ClusterError as error:
        return _unread(prepared, named, len(chart), str(error))
    major, minor = cluster.server_version
    read = (
        f"read {len(live_crds)} live of {len(chart)} chart CRDs from Kubernetes"
        f" {major}.{minor} in {api.attempts} requests"
    )
    way_out: tuple[str, ...] = ()
    if request.in_helm and operation is not None and not outcome.safe:
        way_out = _rollback_way_out(operation, _namespace(request.release))
    return Judged(outcome, named, len(chart), read, way_out)


def _unread(prepared: Prepared, phase: str, checked: int, error: str) -> Judged | Undecided:
    """The verdict where the cluster cannot be read: the pairing of chart and images alone
    refuses (no schema compared, so no declared break or acceptance is used or unused), or
    nothing can be decided."""
    chosen = replace(prepared.policy, declared_breaks=())
    paired = judge(changes(prepared.subject), chosen, prepared.admin)
    unused = acceptance_unused.RULE.code
    paired = replace(paired, findings=tuple(f for f in paired.findings if f.code != unused))
    if not paired.safe:
        return Judged(paired, phase, checked, unread=error)
    return Undecided(error)


NOTHING_COMPARED = Changes(())


def changes(subject: HookSubject, compared: Changes = NOTHING_COMPARED) -> Changes:
    """What the hook's checks find in subject, with compared: the schema comparison of the
    live CRDs with the chart's and the roles', made once however often the hook's own
    checks run (again once the stored objects are tallied)."""
    return replace(compared, raw=run_checks(_HOOK_CHECKS, subject) + compared.raw)


def _operation(api: Api, release: RecordsAt | Rendered | None) -> Operation | None:
    """The pending release record and the one it replaces; None without a record."""
    from upgrade_guard.cluster.client import ClusterError
    from upgrade_guard.cluster.release_records import release_secret

    if isinstance(release, Rendered):
        pending = release.pending
        if pending.operation == "rollback":
            return Operation(pending, release.current)
        records = ReleaseRecords(api, release.release, release.namespace)
        return Operation(pending, replaced(pending, records.record))
    if release is None:
        return None
    at = release

    def fetch(number: int) -> Record | None:
        name = record_name(at.release, number)
        body = release_secret(api, at.namespace, name)
        return None if body is None else decode(name, body)

    try:
        return find_operation(at.revision, fetch)
    except LoadError as error:
        raise ClusterError(str(error)) from None


def _no_record(release: RecordsAt | Rendered | None) -> str:
    if isinstance(release, RecordsAt):
        return f"for {release.release} at or above revision {release.revision} (not run by Helm?)"
    return ""


def _namespace(release: RecordsAt | Rendered | None) -> str:
    return release.namespace if release is not None else ""


class ReleaseRecords:
    """A release's records by revision, each read once by name (Secrets, Helm's default
    storage driver), through the run's session."""

    def __init__(self, api: Api, release: str, namespace: str) -> None:
        self.api, self.release, self.namespace = api, release, namespace
        self.bodies: dict[int, Mapping[str, Any] | None] = {}

    def body(self, revision: int) -> Mapping[str, Any] | None:
        if revision not in self.bodies:
            from upgrade_guard.cluster.release_records import release_secret

            name = record_name(self.release, revision)
            secret = release_secret(self.api, self.namespace, name)
            self.bodies[revision] = None if secret is None else body_of(name, secret)
        return self.bodies[revision]

    def record(self, revision: int) -> Record | None:
        body = self.body(revision)
        return None if body is None else record_of(record_name(self.release, revision), body)


def _gather(api: Api, gathered: evidence.Gathered, subject: HookSubject, limit: int) -> None:
    """The stored objects of the CRDs evidence and the hook's checks read, listed once."""
    if not gathered.crds:
        return
    from upgrade_guard.cluster.stored import StoredAt, stored_objects

    live = [subject.live[name] for name in gathered.crds]
    stored_at = [StoredAt(c.group, c.storage_version, c.plural) for c in live]
    listings = stored_objects(api, stored_at, limit)
    for name, listing in zip(gathered.crds, listings, strict=True):
        for obj in listing:
            gathered.add(name, obj)
        gathered.listed(name, evidence.Listed(listing.complete, listing.problem))


def _rollback_way_out(operation: Operation, namespace: str) -> tuple[str, ...]:
    """Helm leaves a refused rollback's record pending, never applied: every upgrade is then
    refused as "another operation is in progress", and `helm rollback` to the deployed
    revision diffs against that record (on a chart whose revisions differ in objects it
    fails, "original object ... not found"). Deleting the record restores the state before
    the rollback (tests/cluster/test_cert_manager.py)."""
    pending, current = operation.pending, operation.current
    if pending.operation != "rollback" or current is None:
        return ()
    return (
        f"way out of this rollback: Helm keeps revision {pending.revision} pending-rollback,"
        f" never applied; `kubectl delete secret -n {namespace} {pending.name}` leaves the"
        f" release at revision {current.revision} ({current.chart}, {current.status}), as"
        " before the rollback; then upgrade as usual",
    )


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


def _count_stored(api: Api, crds: Mapping[str, Crd]) -> dict[str, Stored]:
    """How many objects each live CRD stores, and the first few names; where they cannot
    be listed, why (the other CRDs are counted all the same)."""
    from upgrade_guard.cluster.client import ClusterError
    from upgrade_guard.cluster.release_records import stored_names

    counted: dict[str, Stored] = {}
    for name, crd in crds.items():
        version = crd.storage_version or next(iter(crd.served_versions), None)
        if version is None:
            continue
        try:
            counted[name] = Stored(*stored_names(api, crd.group, version, crd.plural, SHOWN_STORED))
        except ClusterError as error:
            counted[name] = Stored(0, (), str(error))
    return counted


def _unlisted(
    api: Api, names: list[str], applied: Mapping[str, Crd]
) -> tuple[list[str], dict[str, Crd | None]]:
    """The CRDs Helm would delete that this release's chart does not list: read live where
    the release that added them left this guard the grant (the library's lasting
    ClusterRole), else (the names first) as the replaced record holds them, as applied."""
    from upgrade_guard.cluster.client import Forbidden

    if not names:
        return [], {}
    try:
        live = _crds_of(api.get_crds(names))
    except Forbidden:
        return names, {name: applied[name] for name in names}
    return [], {name: live.get(name) for name in names}


def _crds_of(bodies: Mapping[str, Any]) -> dict[str, Crd]:
    """The live CRDs read, by name (None: the cluster has no such CRD)."""
    from upgrade_guard.cluster.client import ClusterError

    documents = [
        Document(Source(f"cluster: customresourcedefinitions/{name}"), 0, body)
        for name, body in bodies.items()
        if body is not None
    ]
    try:
        return crds_from(documents, validate=False, normalize=True)
    except LoadError as error:
        raise ClusterError(f"cannot read a live CRD: {error}") from None


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


def live_wanted(
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
    stored_state: list[WrittenState]  # the state stored objects hold at the policy's paths
    manifests: Manifests  # the live ClusterRoles and webhook configurations read


def _read_cluster(
    api: Api, names: Iterable[str], objects: Mapping[str, list[str]], policy: Policy
) -> _Cluster:
    """The server version, the named CRDs the cluster has, the state stored objects hold
    at the policy's ``stored-state`` paths, and the named live objects (``objects``: names
    by resource): read raw, made sense of here."""
    from upgrade_guard.cluster.client import ClusterError
    from upgrade_guard.cluster.state import values_at

    version = api.server_version()
    crds = _crds_of(api.get_crds(names))
    written: list[WrittenState] = []
    for location in policy.stored_state:
        at = stored_state_version(location, crds)
        if at is None:
            continue
        for holder, value in values_at(api, location.group, at, location.plural, location.path):
            state = written_in(location, holder, value)
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


def stored_state_version(location: StoredState, live: Mapping[str, Crd]) -> str | None:
    """The version to list location's objects at, or None when its CRD does not exist
    (nothing stored)."""
    if location.version is not None:
        return location.version
    crd = live.get(location.resource)
    return None if crd is None else crd.storage_version


def written_in(location: StoredState, holder: str, value: Any) -> WrittenState | None:
    """The state version an object holds at location's path; None when the value is no
    canonical positive decimal."""
    number = canonical_number(value)
    if number is None:
        return None
    return WrittenState(number, f"{location.resource} {holder} ({'.'.join(location.path)})")
