"""What every check compares, typed: built by the layers above (the commands and the hook's
pipeline read, and with ``counters`` and the engine make sense of the reads) and read by the
rules. The schema comparison's subjects (``CrdSets``, each ``CrdPair`` and ``VersionPair`` in
them), the hook's, verify-history's and the roles'."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from upgrade_guard.crd import (
    DEFAULT_ANNOTATION_PREFIX,
    SCHEMA_DIGEST,
    SCHEMA_VERSION,
    Carrier,
    Crd,
    canonical_number,
)
from upgrade_guard.findings import Change
from upgrade_guard.images import SlotPairing
from upgrade_guard.manifests import Role, WebhookConfiguration

# The admission policy's acceptance of a CRD update to another schema: the digest it goes to.
ACCEPT_SCHEMA = "accept-schema-digest"
POLICY_NOTE = "admission policy: "  # how a finding's note on it begins


def stamped_number(crd: Carrier, key: str) -> int | None:
    """The canonical positive decimal annotation key carries as a string, else None."""
    value = crd.annotations.get(key)
    return canonical_number(value) if isinstance(value, str) else None


def digest_of(crd: Carrier) -> str:
    """The schema digest the admission policy reads on ``crd`` (its annotation is always
    upgrade-guard.io's), or "none", as the policy names a missing one."""
    digest = crd.annotations.get(DEFAULT_ANNOTATION_PREFIX + SCHEMA_DIGEST)
    return digest if isinstance(digest, str) and digest else "none"


@dataclass(frozen=True)
class WrittenState:
    """A controller-state version found in the cluster, and where (never the object's data)."""

    version: int
    holder: str


@dataclass(frozen=True)
class RetiredFinalizer:
    """A finalizer the controller no longer handles, and how objects get rid of it."""

    finalizer: str
    migration: str


@dataclass(frozen=True)
class ConditionBreak:
    """A condition type dropped on purpose, or only some of its reasons (``reasons``)."""

    type: str
    reasons: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Controller:
    """What a CRD's controller handles on its objects, as the policy declares it: the
    finalizers it removes, its condition vocabulary (type -> its reasons, None where none
    are declared; None for the whole when the policy declares none), and what it stopped
    handling on purpose."""

    crd: str
    finalizers: tuple[str, ...] = ()
    conditions: Mapping[str, tuple[str, ...] | None] | None = None
    retired_finalizers: tuple[RetiredFinalizer, ...] = ()
    condition_breaks: tuple[ConditionBreak, ...] = ()

    def retired_types(self) -> set[str]:
        return {b.type for b in self.condition_breaks if not b.reasons}

    def breaks(self, condition_type: str, reason: str | None = None) -> ConditionBreak | None:
        """The break that drops the type (reason None) or that reason of it."""
        return next(
            (
                b
                for b in self.condition_breaks
                if b.type == condition_type
                and (not b.reasons if reason is None else reason in b.reasons)
            ),
            None,
        )


Vocabulary = Mapping[str, tuple[str, ...] | None]


def schema_condition_types(crd: Crd | None) -> Vocabulary | None:
    """The condition types the enum on status.conditions[].type of a CRD's storage version
    allows (no reasons declared), where it has one."""
    version = crd.storage_version if crd is not None else None
    if crd is None or version is None:
        return None
    node: Any = crd.schemas[version]
    for step in ("status", "conditions", None, "type"):
        node = node.get("items") if step is None else (node.get("properties") or {}).get(step)
        if not isinstance(node, Mapping):
            return None
    enum = node.get("enum")
    return {str(t): None for t in enum} if isinstance(enum, list) else None


def vocabulary(controller: Controller | None, crd: Crd | None) -> Vocabulary | None:
    """A CRD's condition vocabulary: as the policy declares it, else its schema's enum."""
    if controller is not None and controller.conditions is not None:
        return controller.conditions
    return schema_condition_types(crd)


@dataclass(frozen=True)
class Retired:
    """What this release stopped handling on one live CRD's objects: finalizers (its
    policy's retired ones, with their migration; those the replaced release's policy
    declares and its own lacks, with none) and condition types."""

    finalizers: tuple[RetiredFinalizer, ...] = ()
    condition_types: frozenset[str] = frozenset()


def stopped_handling(
    controllers: Mapping[str, Controller],
    replaced_controllers: Mapping[str, Controller],
    chart: Mapping[str, Crd],
    live: Mapping[str, Crd],
) -> dict[str, Retired]:
    """What this release stopped handling on each live CRD's objects, where it stopped
    handling something: the finalizers its policy retires and those the replaced release's
    policy declares that its own, which declares the CRD's controller, lacks; the condition
    types its policy breaks and those the live CRD's enum allows, or the replaced release's
    policy declares, that its vocabulary lacks."""
    retired: dict[str, Retired] = {}
    for name in sorted(live):
        controller, before = controllers.get(name), replaced_controllers.get(name)
        finalizers: tuple[RetiredFinalizer, ...] = ()
        if controller is not None:
            declared = {r.finalizer for r in controller.retired_finalizers}
            dropped = [
                RetiredFinalizer(finalizer, "")
                for finalizer in (before.finalizers if before else ())
                if finalizer not in controller.finalizers and finalizer not in declared
            ]
            finalizers = (*controller.retired_finalizers, *dropped)
        types = controller.retired_types() if controller else set()
        after = vocabulary(controller, chart.get(name))
        for was in (schema_condition_types(live[name]), vocabulary(before, None)):
            if was is not None and after is not None:
                types |= set(was) - set(after)
        if finalizers or types:
            retired[name] = Retired(finalizers, frozenset(types))
    return retired


@dataclass(frozen=True)
class Carried:
    """What one CRD's stored objects carry, read for the hook: how many were read, whether
    all of them (else why not), and for each finalizer and condition type the count and the
    first few names of the objects carrying it (never their data)."""

    checked: int = 0
    problem: str | None = None
    complete: bool = True
    finalizers: Mapping[str, Stored] = field(default_factory=dict)
    condition_types: Mapping[str, Stored] = field(default_factory=dict)


@dataclass(frozen=True)
class Stored:
    """How many objects a CRD stores, and the first few names (never their data); ``unread``
    says why they could not be counted (a missing permission), when they could not."""

    count: int
    names: tuple[str, ...]
    unread: str = ""


@dataclass(frozen=True)
class VersionPair:
    """One entry of spec.versions on both sides of a CRD's comparison."""

    crd: str
    name: str
    old: Mapping[str, Any]
    new: Mapping[str, Any]


@dataclass(frozen=True)
class CrdPair:
    """One CRD on both sides of a schema comparison; ``storage_version_only``: the policy
    compares the storage versions only (``versions: storage``).

    ``versions``: the versions whose old schema reached objects or clients (served, or
    objects stored at it: read with it) and whose new one will. A version the old CRD
    neither served nor stored validated nothing: what its new schema does to objects written
    through the other versions is what served versions disagree on (UG110)."""

    old: Crd
    new: Crd
    storage_version_only: bool = False
    versions: tuple[VersionPair, ...] = field(init=False)

    def __post_init__(self) -> None:
        old, new = self.old, self.new
        wanted = {old.storage_version, new.storage_version}
        if not self.storage_version_only:
            wanted.update(new.served_versions)
        compared = tuple(
            VersionPair(new.name, name, old.versions[name], entry)
            for name, entry in new.versions.items()
            if name in old.versions and name in wanted and name in old.reached_versions
        )
        object.__setattr__(self, "versions", compared)


@dataclass(frozen=True)
class CrdSets:
    """What the schema comparison compares (diff; the hook: the live CRDs against the
    chart's; verify-history: the baseline's against the candidate's): the old and the new
    CRDs by name, and the names compared, in order (every name of either side, or a share of
    them); of those, the ones only the old side has (``removed``) and each CRD both sides
    have (``pairs``)."""

    old: Mapping[str, Crd]
    new: Mapping[str, Crd]
    names: tuple[str, ...]
    storage_version_only: bool = False
    removed: tuple[str, ...] = field(init=False)
    pairs: tuple[CrdPair, ...] = field(init=False)

    def __post_init__(self) -> None:
        old, new = self.old, self.new
        removed = tuple(name for name in self.names if name in old and name not in new)
        object.__setattr__(self, "removed", removed)
        pairs = tuple(
            CrdPair(old[name], new[name], self.storage_version_only)
            for name in self.names
            if name in old and name in new
        )
        object.__setattr__(self, "pairs", pairs)

    @classmethod
    def of(
        cls,
        old: Mapping[str, Crd],
        new: Mapping[str, Crd],
        storage_version_only: bool = False,
        names: Iterable[str] | None = None,
    ) -> CrdSets:
        """The sets compared for the names given (every name of either side by default)."""
        given = sorted(old.keys() | new.keys() if names is None else names)
        return cls(old, new, tuple(given), storage_version_only)


@dataclass(frozen=True)
class RoleSubject:
    """The operator's ClusterRoles and Roles (by ``Role.key``) this release renders
    (``after``), what the release before it rendered (``before``, named ``before_label`` in
    messages: diff's OLD, the release Helm replaces) and, in the hook, the live ClusterRoles
    of this release's names (``live``), which a GitOps repository may pin."""

    after: Mapping[str, Role]
    before: Mapping[str, Role] = field(default_factory=dict)
    before_label: str = "OLD"
    live: Mapping[str, Role] = field(default_factory=dict)


@dataclass(frozen=True)
class HookSubject:
    """The chart's CRDs and the live ones (both normalized as the digest sees them, so equal
    specs mean equal digests; none before the cluster is read), each CRD both have (``both``:
    name, chart's, live), the counters the chart declares, each slot's image the release's
    values deploy against the paired counters by the chart's image table (``pairings``), and
    the state written in the cluster. ``schema_key`` is the annotation of the schema version,
    as the policy names it. Plain data: the hook's pipeline makes each part once."""

    chart: Mapping[str, Crd] = field(default_factory=dict)
    live: Mapping[str, Crd] = field(default_factory=dict)
    both: Sequence[tuple[str, Crd, Crd]] = ()
    chart_counters: Mapping[str, int] = field(default_factory=dict)
    pairings: Sequence[SlotPairing] = ()
    written_state: Sequence[WrittenState] = ()
    schema_key: str = DEFAULT_ANNOTATION_PREFIX + SCHEMA_VERSION
    # Under Helm, from its release records: the release this one replaces (described), whether
    # it ran the guard already, the CRDs it applied that this one does not (each with its live
    # object, None when gone) and the objects stored in each of those.
    replaced: str = ""
    adopted: bool = False
    # Whether the replaced release applied the library's admission policy, which refuses
    # a CRD update lowering its counters, and a CRD's deletion, in the apiserver, whatever the
    # hook accepted.
    admission_policy: bool = False
    dropped: Mapping[str, Crd | None] = field(default_factory=dict)
    stored: Mapping[str, Stored] = field(default_factory=dict)
    # What each CRD's controller handles (the chart's policy; the replaced release's, from
    # its record), and what the stored objects of the CRDs whose controller stopped handling
    # something carry (read from the cluster).
    controllers: Mapping[str, Controller] = field(default_factory=dict)
    replaced_controllers: Mapping[str, Controller] = field(default_factory=dict)
    carried: Mapping[str, Carried] = field(default_factory=dict)
    # What this release stopped handling on each live CRD's objects, for the CRDs where it
    # stopped handling something (the objects the hook tallies as ``carried``).
    retired: Mapping[str, Retired] = field(default_factory=dict)
    # The chart's webhook configurations that carry counters, the live ones of the same
    # names (by ``WebhookConfiguration.key``), and each counter's annotation.
    webhooks: Mapping[str, WebhookConfiguration] = field(default_factory=dict)
    live_webhooks: Mapping[str, WebhookConfiguration] = field(default_factory=dict)
    counter_keys: Mapping[str, str] = field(default_factory=dict)
    # The operator's roles: this release's, the replaced release's and the live ClusterRoles.
    roles: RoleSubject = field(default_factory=lambda: RoleSubject({}))

    def policy_acceptance(self, crd: str, acceptance: str, value: str) -> tuple[str, ...]:
        """The note that the admission policy holds this too (when the release applied it):
        the annotation that lets exactly this change through there."""
        if not self.admission_policy:
            return ()
        return (
            f"{POLICY_NOTE}the release's policy refuses this in the apiserver as well, accepted"
            f" here or not; to let exactly this through there too: `kubectl annotate crd {crd}"
            f" upgrade-guard.io/{acceptance}={value} --overwrite`",
        )


@dataclass(frozen=True)
class Restart:
    """A rollback of crd-schema-version admitted for exactly one baseline tree."""

    schema_version: int
    digests: Mapping[str, str]
    reason: str


@dataclass(frozen=True)
class Counter:
    """A contract counter stamped on every CRD as an annotation, and the rule it follows."""

    name: str
    rule: str  # "monotonic" or "equal-when-unchanged"
    annotation: str
    files: tuple[str, ...] = ()
    paired_with_image: bool = False


@dataclass(frozen=True)
class Side:
    """One tree's CRDs, the digest of each equal-when-unchanged counter's files, what each
    CRD's controller handles as the tree's policy declares it, and its webhook configurations
    (by ``WebhookConfiguration.key``)."""

    label: str
    crds: Mapping[str, Crd]
    file_digests: Mapping[str, str] = field(default_factory=dict)
    controllers: Mapping[str, Controller] = field(default_factory=dict)
    webhooks: Mapping[str, WebhookConfiguration] = field(default_factory=dict)


@dataclass(frozen=True)
class Stamped:
    """What a set of CRDs carries under one annotation: each canonical value with the CRDs
    carrying it, and the CRDs that carry none (or a non-canonical one, given as carried)."""

    values: Mapping[int, list[str]]
    missing: list[tuple[str, object]]

    @property
    def value(self) -> int | None:
        """The value the CRDs agree on (the highest where they do not)."""
        return max(self.values) if self.values else None

    def missing_changes(self, key: str, fix: str) -> list[tuple[str, Change]]:
        """Each candidate CRD without a canonical value, and how to fix it."""
        changes = []
        for name, carried in self.missing:
            what = "no" if carried is None else f"the non-canonical {carried!r} as"
            message = (
                f"candidate carries {what} {key}"
                f' (a canonical positive decimal string such as "1"; {fix})'
            )
            changes.append((name, Change(None, message, new=carried)))
        return changes

    def disagreement(self, key: str) -> Change | None:
        """The candidate CRDs carrying different values, when they do."""
        if len(self.values) < 2:
            return None
        spread = "; ".join(f"{v}: {', '.join(names)}" for v, names in sorted(self.values.items()))
        return Change(
            None,
            f"candidate CRDs carry different {key} values ({spread}); all must agree",
            new=sorted(self.values),
        )


def stamped(crds: Mapping[str, Carrier], key: str) -> Stamped:
    values: dict[int, list[str]] = {}
    missing: list[tuple[str, object]] = []
    for name, crd in sorted(crds.items()):
        number = stamped_number(crd, key)
        if number is None:
            missing.append((name, crd.annotations.get(key)))
        else:
            values.setdefault(number, []).append(name)
    return Stamped(values, missing)


@dataclass(frozen=True)
class Release:
    """The schema versions a comparison of stamped CRD sets goes between (the highest each
    side is stamped with; None for a side without one)."""

    before: int | None
    after: int | None

    @classmethod
    def between(cls, old: Mapping[str, Carrier], new: Mapping[str, Carrier], key: str) -> Release:
        """The release a comparison of two CRD sets (diff, the hook) goes between: the highest
        schema version (annotation ``key``) each side is stamped with."""
        return cls(stamped(old, key).value, stamped(new, key).value)

    def ships(self, version: int | None) -> bool:
        """Whether a break of that schema version ships with this release: it is in
        (before, after]."""
        return version is not None and (self.before or 0) < version <= (self.after or 0)

    def why_not(self) -> str:
        if self.after is None:
            return "the new CRDs carry no schema version (run upgrade-guard stamp)"
        if self.before is not None and self.after <= self.before:
            return f"the schema version does not rise ({self.before} -> {self.after})"
        return f"this release goes from schema version {self.before or 0} to {self.after}"


def digest_changes(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    """The CRDs added, removed and changed between two maps of name to spec digest."""
    changes = [f"{name} added" for name in sorted(after.keys() - before.keys())]
    changes += [f"{name} removed" for name in sorted(before.keys() - after.keys())]
    changes += [
        f"{name} changed"
        for name in sorted(before.keys() & after.keys())
        if before[name] != after[name]
    ]
    return tuple(changes)


@dataclass(frozen=True)
class HistorySubject:
    """A candidate tree against its baseline (verify-history): both sides, the digest of each
    CRD's normalized spec on each, the annotations of the schema version and digest and the
    counters in play as the policy names them, its restart records, ``stamp``: the command
    that stamps the CRDs, for the messages."""

    baseline: Side
    candidate: Side
    before_digests: Mapping[str, str]
    after_digests: Mapping[str, str]
    version_key: str
    digest_key: str
    counters: tuple[Counter, ...]
    restarts: tuple[Restart, ...]
    stamp: str

    def controllers(self) -> Iterator[tuple[str, Controller | None, Controller | None]]:
        """Each CRD the candidate keeps, with its controller on each side (None: none
        declared); a CRD the candidate drops is the engine's UG101."""
        for name in sorted(self.candidate.crds):
            yield name, self.baseline.controllers.get(name), self.candidate.controllers.get(name)

    @cached_property
    def after(self) -> int | None:
        return stamped(self.candidate.crds, self.version_key).value

    @cached_property
    def baseline_versions(self) -> list[int]:
        found = (stamped_number(c, self.version_key) for c in self.baseline.crds.values())
        return sorted({n for n in found if n})

    @property
    def before(self) -> int | None:
        return self.baseline_versions[-1] if self.baseline_versions else None

    @cached_property
    def regenerated(self) -> bool:
        """Whether no candidate CRD carries the schema version or digest (a code generator
        rewrote them all); one finding then says so, instead of two per CRD."""
        keys = (self.version_key, self.digest_key)
        crds = self.candidate.crds.values()
        return bool(crds) and not any(key in c.annotations for c in crds for key in keys)

    @cached_property
    def changes(self) -> tuple[str, ...]:
        return digest_changes(self.before_digests, self.after_digests)

    @cached_property
    def stamped_webhooks(self) -> frozenset[str]:
        """The webhook configurations that carry a counter on either side: from then on
        they carry every counter, as the CRDs do."""
        keys = [counter.annotation for counter in self.counters]
        return frozenset(
            name
            for side in (self.baseline, self.candidate)
            for name, webhook in side.webhooks.items()
            if any(key in webhook.annotations for key in keys)
        )

    def carriers(self, side: Side) -> dict[str, Carrier]:
        """What carries the counters on one side: every CRD, and the stamped webhook
        configurations it holds."""
        webhooks = {k: w for k, w in side.webhooks.items() if k in self.stamped_webhooks}
        return {**side.crds, **webhooks}

    def stamped_counters(self) -> Iterator[tuple[Counter, int, int]]:
        """Each counter in play with its value on the baseline and on the candidate, where
        both sides are stamped with one (the counter rules compare nothing else)."""
        for counter in self.counters:
            before = stamped(self.carriers(self.baseline), counter.annotation).value
            after = stamped(self.carriers(self.candidate), counter.annotation).value
            if before is not None and after is not None:
                yield counter, before, after

    @cached_property
    def restart(self) -> tuple[Restart | None, str]:
        """The restart record admitting a rollback from the baseline's schema version, or
        why there is none."""
        version = self.before
        candidates = [r for r in self.restarts if r.schema_version == version]
        if not candidates:
            return None, f"no restart record names schema version {version}"
        baseline = self.before_digests
        problems: list[str] = []
        for record in candidates:
            if dict(record.digests) == dict(baseline):
                return record, ""
            wrong = sorted(n for n in baseline if record.digests.get(n) != baseline[n])
            extra = sorted(record.digests.keys() - baseline.keys())
            detail = []
            if wrong:
                detail.append("differs for " + ", ".join(wrong))
            if extra:
                detail.append("names CRDs the baseline lacks: " + ", ".join(extra))
            problems.append("; ".join(detail))
        return None, (
            f"the restart record for schema version {version} is for another tree"
            f" ({' / '.join(problems)})"
        )

    def rolled_back(self) -> bool:
        return self.before is not None and self.after is not None and self.after < self.before

    def files_changed(self, counter: Counter) -> bool | None:
        if counter.rule != "equal-when-unchanged":
            return None
        name = counter.name
        return self.baseline.file_digests.get(name) != self.candidate.file_digests.get(name)
