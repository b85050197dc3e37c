"""The schema comparison: its subject (``CrdSets``: old CRDs, new CRDs) -> the changes the
rules find.

Runs the checks of the sets as sets (``CrdSetCheck``: a CRD removed), then, for each CRD
both sides have (``CrdPair``), every CRD rule, every version rule on each version compared
(``VersionPair``), the property rules where the schemas differ, and the served versions'
disagreements (UG110); any difference no rule accounts for is unclassified (UG901). The one
judge (``judging``) applies the policy. Reads no files and talks to no cluster.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import combinations

from upgrade_guard import apiserver, rules, schema
from upgrade_guard.apiserver import minors, witness
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Harm, Outcome, Severity, Witness
from upgrade_guard.judging import Changes, Context, Placed, judge, run
from upgrade_guard.policy import DEFAULT_POLICY, Policy
from upgrade_guard.rules import (
    crd_removed,
    map_type_changed,
    served_version_removed,
    storage_version_changed,
    stored_version_removed,
    unclassified_change,
)
from upgrade_guard.rules import served_versions_incompatible as served_pairs
from upgrade_guard.rules.kinds import (
    CrdRule,
    CrdSetCheck,
    PropertyRule,
    RoleCheck,
    Rule,
    VersionRule,
)
from upgrade_guard.subjects import CrdPair, CrdSets, RoleSubject

_SET_CHECKS = rules.of_kind(CrdSetCheck)
_CRD_RULES = rules.of_kind(CrdRule)
_VERSION_RULES = rules.of_kind(VersionRule)
_PROPERTY_RULES = rules.of_kind(PropertyRule)
_ROLE_CHECKS = rules.of_kind(RoleCheck)
_HANDLED_SPEC_FIELDS = frozenset().union(*(r.handles for r in _CRD_RULES))
_HANDLED_VERSION_FIELDS = frozenset().union(*(r.handles for r in _VERSION_RULES))
_HANDLED_KEYWORDS = frozenset().union(*(r.handles for r in _PROPERTY_RULES))


@dataclass(frozen=True)
class SchemaChange:
    """A property rule's change placed at its path; ``node`` is where the rule looked."""

    rule: Rule
    node: schema.Path
    path: schema.Path
    change: Change


def compare_crds(
    old: Mapping[str, Crd],
    new: Mapping[str, Crd],
    policy: Policy = DEFAULT_POLICY,
    kube_version: tuple[int, int] | None = None,
) -> Outcome:
    """Every finding for replacing the old CRD set with the new one."""
    return judge(changes_between(old, new, policy), policy, Context(kube_version))


def changes_between(
    old: Mapping[str, Crd],
    new: Mapping[str, Crd],
    policy: Policy = DEFAULT_POLICY,
    names: Iterable[str] | None = None,
) -> Changes:
    """The changes for the names given (every name of either set by default). Of the policy
    only ``storage_version_only`` counts here, which scoping it to a release keeps."""
    return changes(CrdSets.of(old, new, policy.storage_version_only, names))


def changes(subject: CrdSets) -> Changes:
    """What the rules find between the two CRD sets, by CRD name."""
    raw: list[Placed] = []
    unchanged: set[str] = set()
    try:
        for pair in subject.pairs:
            if pair.old.spec == pair.new.spec:
                unchanged.add(pair.new.name)
            raw.extend(_pair_changes(pair))
            apiserver.forget_schemas()  # no other pair holds this one's schema nodes
        raw.extend(_crd_removed_witnessed(item, subject) for item in run(_SET_CHECKS, subject))
    finally:
        apiserver.forget_schemas()
    raw.sort(key=lambda item: item.crd or "")  # stable: each CRD's changes in rule order
    changed = frozenset(subject.names) - unchanged
    return Changes(tuple(raw), len(subject.pairs), frozenset(unchanged), changed)


def role_changes(subject: RoleSubject) -> Changes:
    """What the role checks find between the roles of two releases (and the live ones);
    a role whose permissions are the same on both sides is unchanged (a declared break for
    it is idle, not stale)."""
    raw = run(_ROLE_CHECKS, subject)
    both = subject.before.keys() & subject.after.keys()
    unchanged = {
        key
        for key in both
        if set(subject.before[key].permissions()) == set(subject.after[key].permissions())
    }
    given = subject.before.keys() | subject.after.keys()
    return Changes(raw, 0, frozenset(unchanged), frozenset(given - unchanged))


def _raw(
    rule: Rule, crd: str, version: str | None, base: schema.Path | None, changes: Iterable[Change]
) -> Iterator[Placed]:
    for change in changes:
        path = None if base is None else base + (change.path or ())
        yield Placed(rule, crd, version, path, change)


def _pair_changes(pair: CrdPair) -> Iterator[Placed]:
    old, new = pair.old, pair.new
    for crd_rule in _CRD_RULES:
        compared = crd_rule.compare(pair)
        if crd_rule.code == served_version_removed.RULE.code:
            compared = (_unserved_witnessed(old, change) for change in compared)
        elif crd_rule.code == stored_version_removed.RULE.code:
            compared = (_stored_removed_witnessed(old, change) for change in compared)
        elif crd_rule.code == storage_version_changed.RULE.code:
            compared = (_storage_moved_witnessed(old, change) for change in compared)
        yield from _raw(crd_rule, new.name, None, None, compared)
    in_spec = unclassified_change.in_spec(pair, _HANDLED_SPEC_FIELDS)
    yield from _raw(unclassified_change.RULE, new.name, None, None, in_spec)
    for version in pair.versions:
        for version_rule in _VERSION_RULES:
            yield from _raw(
                version_rule, new.name, version.name, None, version_rule.compare(version)
            )
        in_version = unclassified_change.in_version(version, _HANDLED_VERSION_FIELDS)
        yield from _raw(unclassified_change.RULE, new.name, version.name, None, in_version)
        status = "status" in (version.new.get("subresources") or {})
        old_schema, new_schema = old.schemas[version.name], new.schemas[version.name]
        builder: witness.Builder | None = None
        for found in schema_changes(old_schema, new_schema):
            change = found.change
            if status and change.ratchetable and _checked_by_status_writes(found):
                change = replace(change, status_written=True)
            if found.rule.code == map_type_changed.RULE.code:
                change = map_type_changed.placed(change, old_schema, new_schema, found.path)
            if _may_refuse(found):
                builder = builder or witness.Builder(
                    old_schema, new_schema, minors.NEWEST, _stored_as(old, version.name)
                )
                target = witness.Target(
                    new.group,
                    new.kind,
                    version.name,
                    found.path,
                    found.rule.code,
                    *_said(change),
                    found.rule.harm,
                    status,
                )
                change = replace(change, witness=builder.witness(target))
            elif _merged_on_apply(found.rule, change):
                builder = builder or witness.Builder(
                    old_schema, new_schema, minors.NEWEST, _stored_as(old, version.name)
                )
                applied = _applied(builder, new, version.name, found, status)
                change = replace(change, witness=applied)
            yield Placed(found.rule, new.name, version.name, found.path, change, found.node)
    if new.conversion_strategy == "None":
        yield from _served_pair_changes(old, new)


def _may_refuse(found: SchemaChange) -> bool:
    """Whether a property rule's change can end as an error and be witnessed: only those
    are looked for. A rule whose harm no stored value decides has none a CREATE, UPDATE or
    GET shows: a map's merge strategy (UG215) is witnessed by a server-side apply
    (``_merged_on_apply``)."""
    rule, severity = found.rule, found.change.severity or found.rule.severity
    return (
        isinstance(rule, PropertyRule) and severity is Severity.ERROR and rule.harm is not Harm.NONE
    )


def _merged_on_apply(rule: Rule, change: Change) -> bool:
    """Whether the change is UG215's, as an error: its harm is server-side apply's, which
    an ``apply`` witness shows (a conflict, a key kept)."""
    severity = change.severity or rule.severity
    return rule.code == map_type_changed.RULE.code and severity is Severity.ERROR


def _applied(
    builder: witness.Builder, new: Crd, version: str, found: SchemaChange, status: bool
) -> Witness | None:
    change = found.change
    target = witness.Target(
        new.group, new.kind, version, found.path, found.rule.code, change.old, change.new,
        found.rule.harm, status,
    )  # fmt: skip
    return witness.applied(builder, target)


def _said(change: Change) -> tuple[object, object]:
    return change.old, change.new


def _unserved_witnessed(old: Crd, change: Change) -> Change:
    """UG105's change with its witness: an object stored at the version no longer served,
    which a GET at that version can no longer reach."""
    gone = change.old if isinstance(change.old, str) else None
    if gone is None or gone not in old.served_versions:
        return change
    stored = _minimal(old, gone)
    return change if stored is None else replace(change, witness=witness.unreachable(gone, stored))


def _crd_removed_witnessed(item: Placed, subject: CrdSets) -> Placed:
    """UG101's change with its witness: an object stored while the CRD was live, which a GET
    at its storage version (else its first served one) can no longer reach."""
    crd = subject.old.get(item.crd or "")
    if item.rule.code != crd_removed.RULE.code or crd is None:
        return item
    found = _stored_at_storage(crd)
    if found is None:
        return item
    return replace(item, change=replace(item.change, witness=witness.unreachable(*found)))


def _stored_removed_witnessed(old: Crd, change: Change) -> Change:
    """UG104's change with its witness: an object written at the storage version the new
    CRD drops, which records it in status.storedVersions: the new CRD is refused. Only for
    the storage version, which applying the old CRD records (others, a file may not)."""
    gone = change.old if isinstance(change.old, str) else None
    if gone is None or gone != old.storage_version or gone not in old.served_versions:
        return change
    stored = _minimal(old, gone)
    if stored is None:
        return change
    return replace(change, witness=witness.crd_refused(gone, stored))


def _storage_moved_witnessed(old: Crd, change: Change) -> Change:
    """UG106's error with its witness: an object stored while the old CRD is live (at its
    storage version, else its first served one); once the new CRD is applied, applying the
    old CRD again (a rollback), which does not list the new storage version, is refused."""
    moved_to = change.new if isinstance(change.new, str) else None
    if change.severity is not None or moved_to is None or moved_to in old.versions:
        return change
    found = _stored_at_storage(old)
    if found is None:
        return change
    return replace(change, witness=witness.rollback_refused(*found, moved_to))


def _stored_at_storage(crd: Crd) -> tuple[str, dict[str, object]] | None:
    """The version an object is written at (the storage version where served, else the
    first served one) and the minimal object there; None where there is none."""
    at = crd.storage_version if crd.storage_version in crd.served_versions else None
    at = at or next(iter(crd.served_versions), None)
    stored = None if at is None else _minimal(crd, at)
    return None if at is None or stored is None else (at, stored)


def _minimal(crd: Crd, version: str) -> dict[str, object] | None:
    return witness.minimal(crd.schemas[version], crd.group, crd.kind, version, minors.NEWEST)


def _checked_by_status_writes(found: SchemaChange) -> bool:
    """Whether a /status write checks what the change constrains (apiextensions
    ``status_strategy.go``): every CEL rule of the object, and the schema of status; list
    uniqueness it holds only where the old object met it, at every minor."""
    handles = found.rule.handles if isinstance(found.rule, PropertyRule) else frozenset()
    if "x-kubernetes-validations" in handles:
        return True
    return found.path[:1] == ("status",) and "x-kubernetes-list-type" not in handles


def schema_changes(old: schema.Node, new: schema.Node) -> list[SchemaChange]:
    """What the property rules find between two schemas, with one finding per subtree."""
    return _changes_at(schema.paired_locations(old, new))


def _changes_both_ways(
    first: schema.Node, second: schema.Node, known: tuple[schema.Node, schema.Node] | None
) -> tuple[list[SchemaChange], list[SchemaChange]]:
    """schema_changes(first, second) and schema_changes(second, first), walking the schemas
    once: two schemas differ at the same locations whichever is taken as the old one. Where
    the known pair holds the same two subtrees, nothing is looked for (paired_locations)."""
    locations = list(schema.paired_locations(first, second, known))
    return _changes_at(locations), _changes_at(at.swapped() for at in locations)


def _changes_at(locations: Iterable[schema.Location]) -> list[SchemaChange]:
    found: list[SchemaChange] = []
    for at in locations:
        rules_to_run, unhandled = _rules_for(schema.differing_keywords(at.old, at.new))
        for rule in rules_to_run:
            for change in rule.compare(at):
                if change.ratchetable and not _ratchets_at(at.path, at.new):
                    change = replace(change, ratchetable=False)
                found.append(SchemaChange(rule, at.path, at.path + (change.path or ()), change))
        leftover = unclassified_change.leftover(at.old, at.new, unhandled) if unhandled else None
        if leftover is not None:
            found.append(SchemaChange(unclassified_change.RULE, at.path, at.path, leftover))
    covering = [
        item for item in found if isinstance(item.rule, PropertyRule) and item.rule.covers_subtree
    ]
    if not covering:
        return found
    # A covering change (a type change) explains everything below its node; from one
    # declared type to another it also explains what else changed at the node (an enum, a
    # bound): no stored value there keeps passing. A type declared where any value was
    # allowed does not: values of that type stay, and the node's other changes reach them.
    below = {item.path for item in covering}
    here = {item.path for item in covering if item.change.old is not None}
    return [
        item
        for item in found
        if not any(item.path[:n] in below for n in range(len(item.path)))
        and (item.path not in here or item in covering)
    ]


@functools.cache
def _rules_for(differing: frozenset[str]) -> tuple[tuple[PropertyRule, ...], frozenset[str]]:
    """The property rules that handle a keyword in differing (the others find nothing), and
    the keywords in differing that no rule handles."""
    rules_to_run = tuple(r for r in _PROPERTY_RULES if not r.handles.isdisjoint(differing))
    return rules_to_run, differing - _HANDLED_KEYWORDS


def _ratchets_at(path: schema.Path, node: schema.Node) -> bool:
    """Whether ratcheting can keep a stored value failing a constraint of this node.

    The apiserver accepts a failing value only while the update leaves the value at the
    constraint's node unchanged. The root changes on every write (metadata), and spec and
    status on every write to any field inside them, so constraints there are never softened
    in practice; a sibling of spec is left unchanged by those writes and ratchets like any
    other node (apiextensions' TestRatchetingFunctionality). Nor are constraints softened on
    a node whose value can hold a field no schema declares, which the apiserver never finds
    unchanged.
    """
    if not path:
        return False
    if not (node.get("type") in ("object", "array") or "properties" in node):
        return True
    return path not in _ALWAYS_WRITTEN and not schema.holds_undeclared_fields(node)


_ALWAYS_WRITTEN = frozenset({("spec",), ("status",)})


def _served_pair_changes(old: Crd, new: Crd) -> Iterator[Placed]:
    """Disagreements between served versions of the new CRD that the old CRD did not have."""
    for first, second in combinations(new.served_versions, 2):
        new_pair = (new.schemas[first], new.schemas[second])
        old_pair = None
        if {first, second} <= old.reached_versions:
            old_pair = (old.schemas[first], old.schemas[second])
        # Where both pairs hold the very same subtrees (what the two sides of a diff share),
        # they disagree alike: neither walk looks there.
        forth, back = _changes_both_ways(*new_pair, old_pair)
        if not (forth or back):
            continue
        known_forth: list[SchemaChange] = []
        known_back: list[SchemaChange] = []
        if old_pair is not None:
            known_forth, known_back = _changes_both_ways(*old_pair, new_pair)
        yield from _disagreements(old, new, first, second, forth, known_forth)
        yield from _disagreements(old, new, second, first, back, known_back)


def _disagreements(
    old: Crd,
    new: Crd,
    first: str,
    second: str,
    changes: list[SchemaChange],
    known_changes: list[SchemaChange],
) -> Iterator[Placed]:
    """What objects written as first and read as second meet, less what they met before."""
    known = {(item.rule.code, item.path) for item in known_changes}
    builder: witness.Builder | None = None
    after: witness.Builder | None = None
    for item in changes:
        rule, path, change = item.rule, item.path, item.change
        if (rule.code, path) in known:
            continue
        found = served_pairs.disagreement(first, second, rule, change)
        if _may_refuse(item):
            made = None
            if first in old.served_versions:
                builder = builder or witness.Builder(
                    old.schemas[first],
                    new.schemas[second],
                    minors.NEWEST,
                    _stored_as(old, first),
                )
                made = _read_at(builder, new, first, second, item, old.storage_version)
            if made is None:
                after = after or witness.Builder(
                    new.schemas[first],
                    new.schemas[second],
                    minors.NEWEST,
                    _stored_as(new, first),
                )
                made = _written_after_upgrade(after, old, new, first, second, item)
            found = replace(found, witness=made)
        yield Placed(served_pairs.RULE, new.name, f"{first}->{second}", path, found, item.node)


def _written_after_upgrade(
    builder: witness.Builder, old: Crd, new: Crd, first: str, second: str, item: SchemaChange
) -> Witness | None:
    """UG110's witness where no object stored while the old CRD is live meets the harm (a
    field the old CRD's ``first`` lacked, ``first`` not served): one written at ``first``
    once the new CRD is applied, which the new CRD refuses or reads back changed at
    ``second``; none where the old CRD, serving both, did the same with it."""
    made = _read_at(builder, new, first, second, item, new.storage_version)
    if made is None:
        return None
    if {first, second} <= set(old.served_versions) and witness.shown_by(
        made, old.schemas[first], old.schemas[second], minors.NEWEST, _stored_as(old, first)
    ):
        return None
    return replace(made, stored_under="new")


def _stored_as(crd: Crd, version: str) -> schema.Node | None:
    """The CRD's storage version's schema, where ``version`` is another one."""
    storage = crd.storage_version
    if storage is None or storage == version:
        return None
    return crd.schemas[storage]


def _read_at(
    builder: witness.Builder,
    new: Crd,
    first: str,
    second: str,
    item: SchemaChange,
    kept_as: str | None,
) -> Witness | None:
    """UG110's witness: an object written at ``first`` (kept in etcd as ``kept_as``, the
    storage version then), which the new CRD refuses or reads back changed at ``second``
    (conversion None rewrites only its apiVersion)."""
    subresources = new.versions[second].get("subresources")
    status = isinstance(subresources, Mapping) and "status" in subresources
    target = witness.Target(
        new.group, new.kind, first, item.path, item.rule.code, *_said(item.change),
        item.rule.harm, status,
    )  # fmt: skip
    found = builder.witness(target)
    kept = new.schemas[kept_as] if kept_as in new.versions else None
    if found is not None:
        found = witness.read_at_another_version(found, new.schemas[second], kept)
    if found is None:
        return None
    at = f"{new.group}/{second}"
    return replace(
        found,
        read_version=second,
        object=None if found.object is None else {**found.object, "apiVersion": at},
        read_back=None if found.read_back is None else {**found.read_back, "apiVersion": at},
    )
