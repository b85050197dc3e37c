"""The apiserver truth table behind tests/cluster/test_rule_truth.py.

A :class:`Scenario` is one CRD evolution (optional ``initial`` schema the objects are stored
under, the ``old`` CRD, the ``new`` CRD) and the :class:`Claim` s it holds: one value location
each, with its own stored object whose only unusual value sits at that location, so claims
sharing a CRD pair never disturb each other. :func:`observe` runs a scenario against a real
kube-apiserver and returns, per claim, a :class:`Truth`:

* whether the apiserver accepted the CRD update (and its message);
* what the untouched object reads back as under the new CRD (pruning, defaulting);
* whether an UPDATE touching another field (``spec.touch``) succeeds (ratcheting);
* whether a ``/status`` write of a second, identical object succeeds;
* whether a CREATE (dry run) of an identical new object succeeds.

The apiserver gets the new CRD with a marker: a root property ``rev`` with a default, new in
that CRD. An object read back with ``rev`` is proof that the apiserver's handler serves the
new schema (it swaps schemas asynchronously after the CRD update), so every observation is
made under the new schema. The engine gets the CRDs without the marker, as a chart has them.
"""

from __future__ import annotations

import copy
import enum
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .crds import Attempt, CRDTrial
from .kube import JSON, Kube

GROUP = "truth.upgrade-guard.dev"
MARKER = "rev"
TOUCH = "touch"


class Verdict(enum.IntEnum):
    """What the apiserver did to stored objects, on the engine's severity scale."""

    OK = 1  # nothing stored is hurt and identical objects can still be created
    WARNING = 2  # stored objects keep working (UPDATE ratcheted) but CREATE of them fails
    ERROR = 3  # stored objects are hurt: CRD refused, UPDATE fails, read-back changed

    def __str__(self) -> str:
        return self.name.lower()


# Schemas --------------------------------------------------------------------------------
def root_schema(
    spec: Mapping[str, Any] | None = None,
    *,
    status: Mapping[str, Any] | None = None,
    **spec_extra: Any,
) -> JSON:
    """A root schema: ``spec`` with ``touch`` (the field UPDATEs change) plus ``spec``
    properties, and ``status`` with ``note`` (the field /status writes change) plus
    ``status`` properties. ``spec_extra``: more keywords of the spec node."""
    spec_node: JSON = {
        "type": "object",
        "properties": {TOUCH: {"type": "string"}, **copy.deepcopy(dict(spec or {}))},
    }
    spec_node.update(copy.deepcopy(spec_extra))
    return {
        "type": "object",
        "properties": {
            "spec": spec_node,
            "status": {
                "type": "object",
                "properties": {"note": {"type": "string"}, **copy.deepcopy(dict(status or {}))},
            },
        },
    }


def version_entry(name: str, schema: JSON, *, storage: bool = True, served: bool = True) -> JSON:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
        "subresources": {"status": {}},
    }


def crd_body(
    plural: str,
    versions: Sequence[JSON],
    *,
    kind: str | None = None,
    scope: str = "Namespaced",
    names: Mapping[str, Any] | None = None,
) -> JSON:
    kind = kind or plural[:-1].capitalize()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {
                "plural": plural,
                "singular": plural[:-1],
                "kind": kind,
                "listKind": f"{kind}List",
                **dict(names or {}),
            },
            "versions": [copy.deepcopy(v) for v in versions],
        },
    }


def with_marker(crd: JSON, value: str) -> JSON:
    """``crd`` whose every version's root schema has the marker property, default ``value``
    (every version: an object is defaulted on read by the schema of the version it is
    stored at, which need not be the storage version)."""
    crd = copy.deepcopy(crd)
    for entry in crd["spec"]["versions"]:
        props = entry["schema"]["openAPIV3Schema"].setdefault("properties", {})
        props[MARKER] = {"type": "string", "default": value}
    return crd


# The table --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    """One value location of a scenario and what the rules must say about it.

    ``codes``: the rules this claim is about; the engine's severity for the claim is the
    highest severity among their findings at ``path``. ``expect``: codes that must be
    reported there (empty for the allowed side of a pair). ``stored``: the spec of the object
    stored under the old (or initial) CRD.
    """

    key: str
    codes: tuple[str, ...]
    path: str | None
    expect: tuple[str, ...]
    stored: JSON
    note: str = ""


@dataclass(frozen=True)
class Scenario:
    key: str  # short, lowercase: part of the plural
    old: JSON | None  # root schemas of the single version v1 (None when ``crds`` is given)
    new: JSON | None
    claims: tuple[Claim, ...]
    initial: JSON | None = None  # a root schema objects are stored under before ``old``
    # Full CRD bodies (initial or None, old, new) built from the plural, for scenarios about
    # CRD-level fields; old and new are then None.
    crds: Callable[[str], tuple[JSON | None, JSON, JSON]] | None = None
    tolerate: tuple[str, ...] = ()  # codes this scenario also causes but does not judge

    def bodies(self, plural: str) -> tuple[JSON | None, JSON, JSON]:
        if self.crds is not None:
            initial, old, new = self.crds(plural)
            return initial, old, new
        assert self.old is not None and self.new is not None
        initial = (
            None if self.initial is None else crd_body(plural, [version_entry("v1", self.initial)])
        )
        return (
            initial,
            crd_body(plural, [version_entry("v1", self.old)]),
            crd_body(plural, [version_entry("v1", self.new)]),
        )


# Observations -----------------------------------------------------------------------------
@dataclass
class Truth:
    """What the apiserver did for one claim."""

    claim: Claim
    crd_update: Attempt
    stored: JSON  # spec as the old CRD served it (see :func:`observe`)
    read: JSON | None = None  # spec read back, untouched, under the new CRD
    read_changes: list[str] = field(default_factory=list)  # hurtful differences on read
    update: Attempt | None = None  # UPDATE touching spec.touch only
    status_write: Attempt | None = None  # /status write of status.note only
    create: Attempt | None = None  # CREATE (dry run) of an identical object

    @property
    def verdict(self) -> Verdict:
        if not self.crd_update.allowed:
            return Verdict.ERROR
        assert self.update is not None and self.create is not None
        assert self.status_write is not None
        if self.read_changes or not self.update.allowed or not self.status_write.allowed:
            return Verdict.ERROR
        if not self.create.allowed:
            return Verdict.WARNING
        return Verdict.OK

    def row(self) -> dict[str, str]:
        """The table row of the report."""

        def said(attempt: Attempt | None) -> str:
            if attempt is None:
                return "n/a"
            return "ok" if attempt.allowed else f"refused: {_short(attempt.message)}"

        return {
            "claim": self.claim.key,
            "crd update": said(self.crd_update),
            "read-back": "n/a"
            if self.read is None
            else ("unchanged" if not self.read_changes else "; ".join(self.read_changes)),
            "update untouched": said(self.update),
            "status write": said(self.status_write),
            "create identical": said(self.create),
            "verdict": str(self.verdict),
        }


def _short(message: str, limit: int = 220) -> str:
    # Drop the object-name prefix every refusal starts with.
    _, sep, rest = message.partition(" is invalid: ")
    text = rest if sep else message
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _declared(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The schema of ``key`` inside an object schema, or None when the schema does not
    declare it (an addition there is a new field, not a change of a stored one)."""
    if not schema:
        return None
    props = schema.get("properties") or {}
    if key in props:
        child: Mapping[str, Any] = props[key]
        return child
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        return additional
    if additional is True or schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return {}
    return None


def diff_read(stored: Any, read: Any, schema: Mapping[str, Any] | None, path: str) -> list[str]:
    """Differences between a stored value and its read-back that hurt: values removed or
    changed, and values added at locations the old schema declared (a default on an existing
    field). Values added at locations only the new schema declares are new fields."""
    if isinstance(stored, dict) and isinstance(read, dict):
        changes: list[str] = []
        for key in sorted(stored.keys() | read.keys()):
            where = f"{path}.{key}"
            if key not in read:
                changes.append(f"{where} {_json(stored[key])} gone on read")
            elif key not in stored:
                if _declared(schema, key) is not None:
                    changes.append(f"{where} reads {_json(read[key])} (defaulted)")
            else:
                changes.extend(diff_read(stored[key], read[key], _declared(schema, key), where))
        return changes
    if stored != read or type(stored) is not type(read):
        return [f"{path} {_json(stored)} reads as {_json(read)}"]
    return []


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _object(name: str, spec: JSON) -> JSON:
    return {"metadata": {"name": name}, "spec": copy.deepcopy(spec)}


def _spec_schema(crd: JSON) -> Mapping[str, Any] | None:
    for entry in crd["spec"]["versions"]:
        if entry.get("storage"):
            schema: Mapping[str, Any] = entry["schema"]["openAPIV3Schema"]
            return _declared(schema, "spec")
    return None


@dataclass
class ScenarioRun:
    """A scenario as run: the CRDs it applied (for the engine) and the truth per claim."""

    scenario: Scenario
    old: JSON  # old CRD as the chart has it, plus the live status.storedVersions
    new: JSON  # new CRD as the chart has it (the apiserver got it with the marker)
    truths: dict[str, Truth]


def plural_for(scenario: Scenario) -> str:
    return f"{scenario.key.replace('-', '')}{secrets.token_hex(3)}s"


def _wait_marker(trial: CRDTrial, names: Sequence[str], value: str) -> dict[str, JSON]:
    reads: dict[str, JSON] = {}
    for name in names:
        reads[name] = trial.wait_read(
            name,
            lambda o: o.get(MARKER) == value,
            timeout=20,
            what=f"{trial.name}: schema with {MARKER}={value!r} served",
        )
    return reads


def observe(kube: Kube, scenario: Scenario, namespace: str) -> ScenarioRun:
    """Apply (initial,) old, store two objects per claim, apply new, observe.

    ``before`` of each claim is the object as the old CRD serves it: the CREATE's answer, or
    (with an initial CRD) a read once the old CRD is served, so defaults the old CRD applies
    on read count as what the object read before the update.
    """
    plural = plural_for(scenario)
    initial, old, new = scenario.bodies(plural)
    trial = CRDTrial(kube, namespace)
    trial.apply_crd(initial if initial is not None else old).expect_allowed()
    before: dict[str, JSON] = {}
    for claim in scenario.claims:
        for suffix in ("", "-st"):
            created = trial.create(_object(claim.key + suffix, claim.stored)).expect_allowed()
            before[claim.key + suffix] = created.get("spec") or {}
    if initial is not None:
        trial.apply_crd(with_marker(old, "old")).expect_allowed()
        reads = _wait_marker(trial, [c.key for c in scenario.claims], "old")
        before.update({name: o.get("spec") or {} for name, o in reads.items()})
    live_old = copy.deepcopy(old)
    live_old["status"] = {"storedVersions": trial.stored_versions()}
    update = trial.apply_crd(with_marker(new, "new"))
    old_spec_schema = _spec_schema(old)
    truths: dict[str, Truth] = {}
    after: dict[str, JSON] = {}
    if update.allowed:
        after = _wait_marker(trial, [c.key for c in scenario.claims], "new")
    for claim in scenario.claims:
        truth = Truth(claim, update, before[claim.key])
        truths[claim.key] = truth
        if not update.allowed:
            continue
        truth.read = after[claim.key].get("spec") or {}
        truth.read_changes = diff_read(truth.stored, truth.read, old_spec_schema, "spec")
        truth.create = trial.create(_object(claim.key + "-new", claim.stored), dry_run=True)
        truth.update = trial.update(claim.key, lambda o: o["spec"].update({TOUCH: "touched"}))
        truth.status_write = trial.update(
            claim.key + "-st",
            lambda o: o.setdefault("status", {}).update(note="written"),
            subresource="status",
        )
    return ScenarioRun(scenario, live_old, new, truths)
