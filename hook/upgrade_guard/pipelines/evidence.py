"""Evidence from stored objects for the findings that depend on data: those of the rules
with a harm (``Rule.harm``: what they do to a stored object is refuse it on write, change
it on read, or both).

A schema diff says what could break; the stored objects say what will. For each CRD
version with such findings, every stored object (streamed: only counters and a handful of
names are kept) is judged by the new schema (:mod:`judge`), and each finding is matched
with what the object would suffer at the finding's path:

* **confirmed**: at least one object would be refused on CREATE there (a restore, a move
  to another cluster) or reads back changed there (pruned, defaulted). A ratcheted
  warning becomes an error: the object can no longer be created as it is, nor that
  field be edited. The note gives the count and at most a few names;
* **not affected**: every object was checked and none is: an error becomes a warning
  (a strict policy keeps it an error), with the count checked;
* **not checkable**: the listing stopped at its limit, or could not be made, or a CEL
  rule there could not be evaluated; the finding stays as it is and says why.

A finding the policy excuses (a declared break, an acceptance) stays excused: its authors
wrote it without this cluster's objects; when objects confirm it, it says so, with the
count and names. Objects that would fail their next write (UPDATE or /status) for a reason
no finding names are counted too. Reports carry names and schema paths, never object values.

The same listing serves the hook's checks of what objects carry: where this release stopped
handling a finalizer or condition type on a live CRD (the subject's ``retired``), its
objects' finalizers and condition types are tallied (``CarriedTally``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from upgrade_guard import schema
from upgrade_guard.apiserver import values
from upgrade_guard.apiserver.read_defaults import may_be_read_default
from upgrade_guard.apiserver.violations import Violation
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding, Harm, Severity
from upgrade_guard.judging import Changes
from upgrade_guard.rules import required_added
from upgrade_guard.subjects import (
    Carried,
    HookSubject,
    Stored,
)

if TYPE_CHECKING:  # imported where a schema judges objects: the CEL runtime loads slowly
    from upgrade_guard.apiserver.judge import Judge

NAMES_SHOWN = 3
_SEGMENT = re.compile(r'\[\]|\*|\["(?:[^"\\]|\\.)*"\]|[^.\[\]]+')


def schema_segments(path: str | None) -> tuple[str, ...]:
    """A finding's path (``spec.containers[].name``, ``spec.labels.*``) as segments, with
    ``[]`` for array items and ``*`` for map values."""
    if path in (None, "."):
        return ()
    found = []
    for token in _SEGMENT.findall(str(path)):
        found.append(str(json.loads(token[1:-1])) if token.startswith('["') else token)
    return tuple(found)


def value_segments(schema: values.Schema, steps: Iterable[str | int]) -> tuple[str, ...]:
    """The segments of a value's location (its steps), following ``schema``: ``[]`` for
    array items, the key itself for a map value (a finding's ``*`` matches any key, and one
    naming the key matches it: a property declared where additionalProperties was)."""
    node: values.Schema | None = schema
    found: list[str] = []
    for step in steps:
        if isinstance(step, int):
            found.append("[]")
            node = values.item_schema(node)
            continue
        properties = (node or {}).get("properties") or {}
        additional = (node or {}).get("additionalProperties")
        found.append(step)
        if step not in properties and isinstance(additional, dict):
            node = additional
        else:  # a property, or a field the schema no longer declares (pruned)
            node = properties.get(step)
    return tuple(found)


def _pointer_steps(pointer: str, obj: Any) -> list[str | int]:
    """An RFC 6901 pointer into ``obj`` as steps (list indices as int)."""
    steps: list[str | int] = []
    node = obj
    for raw in pointer.split("/")[1:]:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and key.isdigit():
            steps.append(int(key))
            node = node[int(key)] if int(key) < len(node) else None
        else:
            steps.append(key)
            node = node.get(key) if isinstance(node, dict) else None
    return steps


def _within(location: tuple[str, ...], finding: tuple[str, ...]) -> bool:
    if len(location) < len(finding):
        return False
    return all(
        want == have or (want == "*" and have != "[]")
        for want, have in zip(finding, location, strict=False)
    )


@dataclass
class Tally:
    """What the objects showed for one finding."""

    affected: int = 0
    writes_fail: int = 0  # of the affected, those whose label UPDATE or /status fails too
    names: list[str] = field(default_factory=list)
    not_evaluated: set[str] = field(default_factory=set)
    # not affected, reading there only what the live schema may default on read
    read_defaults: int = 0


@dataclass(frozen=True)
class Target:
    """Where a change whose rule has a harm (``Rule.harm``) points, and what that harm is."""

    path: str | None
    harm: Harm


# Where a change or its finding points: the CRD, the version, the rule's code and the path.
Place = tuple[str, str, str, str | None]


@dataclass
class Unpredicted:
    """The objects whose next write fails at places only the same targets cover (for each
    place, the indices of the targets covering it), and the first few (place in the listing,
    name)."""

    count: int = 0
    first: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class VersionEvidence:
    """Stored objects judged by one new CRD version's schema, for what its data changes
    point at (``targets``)."""

    judge: Judge
    targets: list[Target]
    live: Crd | None = None  # the CRD the objects were read with
    checked: int = 0
    tallies: dict[int, Tally] = field(default_factory=dict)
    # objects whose next write fails, by the targets covering each place it fails at: those
    # it fails where no judged finding points are told once the findings are known
    failing: dict[frozenset[frozenset[int]], Unpredicted] = field(default_factory=dict)

    def add(self, obj: Mapping[str, Any]) -> None:
        stored = dict(obj)
        found = self.judge.judge(stored)
        self.checked += 1
        name = _name(stored)
        created = self._locations(found.create.violations)
        read, read_defaults = self._read_changes(stored, found.read_changes)
        writes = self._locations(found.update.violations + found.status.violations)
        unevaluated = {
            value_segments(self.judge.schema, values.steps(n.path)): n.rule
            for n in found.create.not_evaluated
        }
        targets = [schema_segments(t.path) for t in self.targets]
        for index, (pointed, target) in enumerate(zip(self.targets, targets, strict=True)):
            tally = self.tallies.setdefault(index, Tally())
            tally.not_evaluated.update(
                rule for where, rule in unevaluated.items() if _within(where, target)
            )
            if pointed.harm is Harm.CHANGED_ON_READ:
                hurt = read
            else:
                hurt = created | read if pointed.harm is Harm.BOTH else created
            hit = any(_within(where, target) for where in hurt)
            if not hit:
                if pointed.harm is Harm.CHANGED_ON_READ:
                    tally.read_defaults += any(_within(w, target) for w in read_defaults)
                continue
            tally.affected += 1
            tally.writes_fail += any(_within(where, target) for where in writes)
            if len(tally.names) < NAMES_SHOWN:
                tally.names.append(name)
        if writes:
            covering = frozenset(
                frozenset(i for i, t in enumerate(targets) if _within(w, t)) for w in writes
            )
            failing = self.failing.setdefault(covering, Unpredicted())
            failing.count += 1
            if len(failing.first) < NAMES_SHOWN:
                failing.first.append((self.checked, name))

    def unpredicted(self, pointed: set[int]) -> tuple[int, list[str]]:
        """How many objects would fail their next write where none of the targets
        ``pointed`` (those the judge made findings of) points, and the first few names."""
        count, first = 0, []
        for covering, failing in self.failing.items():
            if any(not places & pointed for places in covering):
                count += failing.count
                first.extend(failing.first)
        return count, [name for _, name in sorted(first)[:NAMES_SHOWN]]

    def _read_changes(
        self, stored: Mapping[str, Any], changes: Iterable[tuple[str, str]]
    ) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
        """Where the object reads back changed, and apart from those where it loses only a
        value the live schema may have defaulted on read (nothing stored goes away)."""
        changed: set[tuple[str, ...]] = set()
        read_defaults: set[tuple[str, ...]] = set()
        live = self.live
        for op, path in changes:
            steps = _pointer_steps(path, stored)
            where = value_segments(self.judge.schema, steps)
            if (
                op == "remove"
                and live is not None
                and may_be_read_default(
                    stored,
                    steps,
                    live.schemas.values(),
                    live.raw.get("metadata", {}).get("resourceVersion"),
                )
            ):
                read_defaults.add(where)
            else:
                changed.add(where)
        return changed, read_defaults

    def _locations(self, violations: Iterable[Violation]) -> set[tuple[str, ...]]:
        return {value_segments(self.judge.schema, values.steps(v.path)) for v in violations}


def classify(
    finding: Finding,
    harm: Harm,
    tally: Tally | None,
    checked: int,
    *,
    complete: bool,
    strict: bool,
    kind: str,
) -> Finding:
    """``finding``, whose rule does ``harm``, with its evidence: ``complete`` when every
    stored object was checked."""
    if tally is not None and tally.affected:
        what = _affected(finding, harm, tally, checked, complete, kind)
        severity = Severity.ERROR if _ratcheted(finding) else finding.severity
        return replace(finding, severity=severity, notes=(*finding.notes, f"evidence: {what}"))
    if tally is not None and tally.not_evaluated:
        rule = sorted(tally.not_evaluated)[0]
        return not_checkable(finding, f"rule not evaluated here: {rule}")
    if not complete:
        return not_checkable(finding, f"stopped at the limit of {checked:,} {kind}, none affected")
    severity = finding.severity
    if severity is Severity.ERROR and not strict:
        severity = Severity.WARNING
    kept = " (strict policy: still an error)" if strict else ""
    note = f"evidence: no stored object affected ({checked:,} checked){kept}"
    if tally is not None and tally.read_defaults:
        note += f"; {_read_defaults_note(tally.read_defaults, kind)}"
    return replace(finding, severity=severity, notes=(*finding.notes, note))


def _affected(
    finding: Finding, harm: Harm, tally: Tally, checked: int, complete: bool, kind: str
) -> str:
    """What the objects a finding is confirmed on suffer: how many, the first names."""
    shown = ", ".join(tally.names) + (", ..." if tally.affected > len(tally.names) else "")
    of = f"{checked:,}" if complete else f"the first {checked:,}"
    what = f"{tally.affected:,} of {of} {kind} affected: {shown}"
    if tally.writes_fail:
        what += f"; {tally.writes_fail:,} of them also fail their next update"
    else:
        what += (
            f"; refused on CREATE and on any change of {_revalidated_on_change(finding)};"
            " other updates pass by ratcheting"
            if harm is not Harm.CHANGED_ON_READ
            else "; they read back changed"
        )
    if tally.read_defaults:
        what += f"; {_read_defaults_note(tally.read_defaults, kind)}"
    return what


def _read_defaults_note(count: int, kind: str) -> str:
    return (
        f"{count:,} {kind} read there only what the live schema defaults and were not written"
        " since the live CRD last changed: it may be defaulted on read only, so no loss is"
        " claimed for them"
    )


def _revalidated_on_change(finding: Finding) -> str:
    """What an UPDATE must leave unchanged to pass by ratcheting: the finding's node, or for
    a newly required field the object holding the required list, where the apiserver
    reports a missing field (held to the apiserver by tests/cluster/test_hook_evidence.py)."""
    path = str(finding.path)
    if finding.code == required_added.RULE.code:
        *holder, _ = _SEGMENT.finditer(path)
        if holder:
            return path[: holder[-1].end()]
    return path


def not_checkable(finding: Finding, why: str) -> Finding:
    """The finding, its stored objects not checked, and why. A ratcheted warning, which an
    affected object would make an error, is an error: the guard never passes what it could
    not look at (--fail-open is the way past it)."""
    if not _ratcheted(finding):
        return _note(finding, f"not checkable: {why}")
    return replace(
        _note(finding, f"not checkable: {why}; an error until they can be checked"),
        severity=Severity.ERROR,
    )


def _ratcheted(finding: Finding) -> bool:
    """A warning only because ratcheting lets updates of unchanged values pass."""
    notes = finding.notes
    return finding.severity is Severity.WARNING and any(n.startswith("ratcheted") for n in notes)


def _note(finding: Finding, text: str) -> Finding:
    return replace(finding, notes=(*finding.notes, f"evidence: {text}"))


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)


@dataclass(frozen=True)
class Listed:
    """How one CRD's listing of stored objects ended: every object read (``complete``), or
    stopped at the limit, or at a failure (``problem`` then says what)."""

    complete: bool
    problem: str | None


SHOWN_HOLDERS = 5  # names kept for each finalizer or condition type


class CarriedTally:
    """The finalizers and condition types one CRD's stored objects carry, tallied object by
    object (names and counts only: nothing of an object is kept)."""

    def __init__(self) -> None:
        self.checked = 0
        self._finalizers: dict[str, list[str]] = {}
        self._types: dict[str, list[str]] = {}
        self._counts: dict[tuple[bool, str], int] = {}

    def add(self, obj: Mapping[str, Any]) -> None:
        self.checked += 1
        meta = obj.get("metadata") or {}
        holder = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
        conditions = (obj.get("status") or {}).get("conditions")
        types = [c.get("type") for c in conditions or () if isinstance(c, Mapping)]
        for is_finalizer, names, found in (
            (True, self._finalizers, meta.get("finalizers") or ()),
            (False, self._types, types),
        ):
            for key in {k for k in found if isinstance(k, str)}:
                self._counts[is_finalizer, key] = self._counts.get((is_finalizer, key), 0) + 1
                shown = names.setdefault(key, [])
                if len(shown) < SHOWN_HOLDERS:
                    shown.append(holder)

    def carried(self, *, complete: bool, problem: str | None) -> Carried:
        return Carried(
            checked=self.checked,
            complete=complete,
            problem=problem,
            finalizers={
                k: Stored(self._counts[True, k], tuple(v)) for k, v in self._finalizers.items()
            },
            condition_types={
                k: Stored(self._counts[False, k], tuple(v)) for k, v in self._types.items()
            },
        )


class Gathered:
    """What the stored objects say, read before the changes are judged, each CRD's objects
    listed once for every check that needs them: evidence for the data-dependent changes
    (with ``evidence``), and the finalizers and condition types the objects carry where this
    release stopped handling some (the subject's ``retired``; the tallies as ``carried``).
    ``crds`` names the CRDs whose objects it needs, in order; each object of their
    listings, made elsewhere, goes to ``add``, and how each listing ended to ``listed``;
    ``weighed`` then puts the evidence on the findings the judge made of those
    changes (on an excused one, only that objects confirm it: it stays excused)."""

    def __init__(
        self,
        changes: Changes,
        subject: HookSubject,
        kube_version: tuple[int, int],
        *,
        strict: bool,
        evidence: bool,
    ) -> None:
        chart, live = subject.chart, subject.live
        self._strict = strict
        self._kinds: dict[str, str] = {}
        self._converted: set[Place] = set()
        self._by_version: dict[str, dict[str, VersionEvidence]] = {}
        self._indices: dict[Place, int] = {}
        self._listings: dict[str, Listed] = {}
        for item in changes.raw if evidence else ():
            name, version = item.crd, str(item.version)
            if (
                item.rule.harm is Harm.NONE
                or name is None
                or name not in chart
                or version not in chart[name].versions
                or name not in live
                or item.change.excused is not None
            ):
                continue
            path = None if item.path is None else schema.render_path(item.path)
            place = (name, version, item.rule.code, path)
            if live[name].conversion_strategy != "None":
                self._converted.add(place)
                continue
            if place in self._indices:
                continue
            self._kinds[name] = live[name].plural or name
            versions = self._by_version.setdefault(name, {})
            if version not in versions:
                from upgrade_guard.apiserver.judge import Judge

                schema_ = chart[name].schemas[version]
                versions[version] = VersionEvidence(
                    Judge(schema_, kube_version), [], live=live[name]
                )
            targets = versions[version].targets
            self._indices[place] = len(targets)
            targets.append(Target(path, item.rule.harm))
        self._tallies = {name: CarriedTally() for name in subject.retired}
        self.crds = list(dict.fromkeys([*self._by_version, *self._tallies]))
        self.carried: dict[str, Carried] = {}

    def add(self, name: str, obj: Mapping[str, Any]) -> None:
        """One stored object of the CRD ``name`` (one of ``crds``): judged and tallied."""
        for collected in self._by_version.get(name, {}).values():
            collected.add(obj)
        tally = self._tallies.get(name)
        if tally is not None:
            tally.add(obj)

    def listed(self, name: str, listed: Listed) -> None:
        """The end of the CRD ``name``'s listing."""
        if name in self._by_version:
            self._listings[name] = listed
        tally = self._tallies.get(name)
        if tally is not None:
            self.carried[name] = tally.carried(complete=listed.complete, problem=listed.problem)

    def weighed(self, findings: Sequence[Finding]) -> list[Finding]:
        """The judge's findings in its order with the evidence on them (on one a declared
        break excuses, only that objects confirm it: it stays excused), and on each CRD's
        first the objects that fail where no finding points."""
        findings = list(findings)
        first_of: dict[str, int] = {}
        pointed: dict[tuple[str, str], set[int]] = {}
        for i, finding in enumerate(findings):
            name, version = finding.crd, str(finding.version)
            if name is None:
                continue
            excused = finding.excused is not None
            place = (name, version, finding.code, finding.path)
            if place in self._converted:
                if not excused:
                    findings[i] = not_checkable(finding, "objects are converted by a webhook")
                continue
            collected = self._by_version.get(name, {}).get(version)
            listing = self._listings.get(name)
            index = self._indices.get(place)
            if collected is None or listing is None or index is None:
                continue
            pointed.setdefault((name, version), set()).add(index)
            tally, harm = collected.tallies.get(index), collected.targets[index].harm
            if excused:
                # A declared break was written without this cluster's objects: it still
                # excuses, and the finding says what they show.
                if not listing.problem and tally is not None and tally.affected:
                    what = _affected(finding, harm, tally, collected.checked, listing.complete,
                                     self._kinds[name])  # fmt: skip
                    findings[i] = _note(finding, f"excused, though confirmed: {what}")
                continue
            first_of.setdefault(name, i)
            if listing.problem:
                findings[i] = not_checkable(finding, listing.problem)
                continue
            findings[i] = classify(
                finding,
                harm,
                tally,
                collected.checked,
                complete=listing.complete,
                strict=self._strict,
                kind=self._kinds[name],
            )
        for name, first in first_of.items():
            if self._listings[name].problem:
                continue
            unpredicted, names = 0, set()
            for version, collected in self._by_version[name].items():
                if (name, version) in pointed:
                    count, shown = collected.unpredicted(pointed[name, version])
                    unpredicted += count
                    names.update(shown)
            if unpredicted:
                listed = ", ".join(sorted(names)[:NAMES_SHOWN]) + (
                    ", ..." if unpredicted > NAMES_SHOWN else ""
                )
                findings[first] = _note(
                    findings[first],
                    f"also {unpredicted:,} {self._kinds[name]} would fail their next update"
                    f" where no finding points: {listed}",
                )
        return findings
