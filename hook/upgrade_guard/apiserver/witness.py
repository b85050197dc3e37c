"""Witnesses: for a change at (version, path) between an old and a new CRD schema, the
smallest object the old schema accepts that the new one refuses (CREATE, UPDATE) or reads
back changed, made from the schemas alone (never from stored data, so safe to print) and
confirmed by this package's model of the apiserver (:class:`judge.Judge`).

The object is the minimal one the old schema accepts (every required field filled with the
first value its node accepts: an enum member, a bound, an example of its format, a string
its pattern accepts), with one candidate value put at the change's path: the candidates of
the rule first (a value its new enum lost, a string the new pattern refuses, the field
absent, null, an unknown field, a duplicate item), then values of every kind. A candidate
counts only where the old model accepts the object as a CREATE and the new model refuses
it at or below the path, or reads back something changed there: the harm is the
finding's own. Where no candidate is, there is no witness (the caller says unproven).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import jsonpatch

from upgrade_guard import schema as schemas
from upgrade_guard.findings import Harm, Witness

from . import cel_types, formats, judge, readback, regex_inclusion, values
from .openapi import OpenAPIValidator
from .violations import Violation

NAME = "witness"
_UNKNOWN_FIELD = "x-upgrade-guard-witness"
_NOTHING = "a^"  # a pattern no string matches: refusal(pattern, _NOTHING) is one it does
_MAX_DEPTH = 24
_MAX_PAIRS = 6  # candidates tried each side of an UPDATE (transition rules)
# A value of each format the apiserver checks, then strings that are none of them.
_FORMAT_EXAMPLES: tuple[str, ...] = (
    "a",
    "0",
    "witness.example.com",
    "https://example.com/",
    "a@example.com",
    "192.0.2.1",
    "2001:db8::1",
    "192.0.2.0/24",
    "00:00:5e:00:53:01",
    "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    "6ba7b810-9dad-31d1-80b4-00c04fd430c8",
    "6ba7b810-9dad-41d1-80b4-00c04fd430c8",
    "6ba7b810-9dad-51d1-80b4-00c04fd430c8",
    "2020-01-01",
    "2020-01-01T00:00:00Z",
    "1s",
    "YQ==",
    "0-306-40615-2",
    "978-0-306-40615-7",
    "4111111111111111",
    "078-05-1120",
    "#fff",
    "rgb(0,0,0)",
    "5f4dcc3b5aa765d61d8327de",
    "A",
    "a b",
    "-",
    "",
)
_SCALARS: tuple[Any, ...] = (0, 1, -1, 1.5, "a", "0", "", True, False, [], {})
# The apiserver's words for a check's error (apiextensions-apiserver's conversion of
# kube-openapi's errors to field errors); every other check is "Invalid value".
_REASONS = {
    "enum": "Unsupported value",
    "required": "Required value",
    "duplicate": "Duplicate value",
    "maxLength": "Too long",
    "maxItems": "Too many",
    "maxProperties": "Too many",
}
# Checks whose errors are field errors built by path (CEL rules, list types, embedded
# metadata); the OpenAPI schema's errors name the path as kube-openapi walked it.
_FIELD_PATHED = frozenset({"rule", "rule-error", "embedded", "duplicate"})
_COMBINATORS = {
    "oneOf": "must validate one and only one schema (oneOf)",
    "anyOf": "must validate at least one schema (anyOf)",
    "not": "must not validate the schema (not)",
}
# A CEL rule's reason, as the field error it becomes.
_RULE_REASONS = {
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}
_ABSENT = object()  # a candidate: the field left out
_TESTED = re.compile(r"\bhas\(self((?:\.[A-Za-z_]\w*)+)\)")
_REPAIRS = 3
_KEYED = re.compile(r'\[("(?:[^"\\]|\\.)*")\]')
_QUOTED = re.compile(r"'[^'\\]*'|\"[^\"\\]*\"")
# The largest candidates at a bound: the corpus tightens maxItems and maxProperties to 4096.
_MOST_ITEMS = 10_000
_LONGEST = 1 << 20
_NAMED = re.compile(r"\bself\.([A-Za-z_]\w*)")
_COMPARED = re.compile(
    r"\bself\.([A-Za-z_]\w*)\s*(==|>=|<=|>|<)\s*('[^'\\]*'|\"[^\"\\]*\"|-?\d+|true|false)"
)
_NOT_FOUND = "the server could not find the requested resource"
# kube-apiserver 1.33+ on a status.storedVersions entry spec.versions lacks (before 1.33:
# "must appear in spec.versions"); the entry's index depends on the CRD's history.
_STORED_MISSING = 'Invalid value: "{}": missing from spec.versions'


@dataclass(frozen=True)
class Target:
    """What a witness is looked for: the CRD's group and kind, the version, the change's
    path (schema segments: names, ``[]``, ``*``) and rule, what the change says it
    added (a CEL rule's expression) where that matters, and the rule's harm: a rule whose
    harm is a refusal is witnessed by a refusal only, one changed on read by a read only.
    With the status subresource, a CREATE drops status: the minimal object holds none, and
    a change under status is witnessed by a /status write (operation ``status``)."""

    group: str
    kind: str
    version: str
    path: schemas.Path
    code: str
    old: Any = None
    new: Any = None
    harm: Harm = Harm.BOTH
    status_subresource: bool = False


class Builder:
    """Witnesses for the changes between one version's old and new root schemas: the
    judges and the minimal object are made once, whatever number of changes are asked."""

    def __init__(
        self,
        old: values.Schema,
        new: values.Schema,
        kube_version: tuple[int, int],
        stored_as: values.Schema | None = None,
    ) -> None:
        """``stored_as``: the old CRD's storage version's schema where the witness's version
        is another: a write is stored as that version (conversion None), pruned by its
        schema too, so a candidate it would change is no object the old CRD stores as such."""
        self.old_schema, self.new_schema, self.stored_as = old, new, stored_as
        self.old, self.new = judge.Judge(old, kube_version), judge.Judge(new, kube_version)
        self._synth = _Synthesis(kube_version)
        self._bases: dict[tuple[str, str, str], dict[str, Any] | None] = {}

    def witness(self, target: Target) -> Witness | None:
        if target.status_subresource and target.path[:1] == ("status",):
            return self._status(target)
        base = self._base(target)
        if base is None:
            return None
        transition = isinstance(target.new, str) and schemas.uses_old_self(target.new)
        tried: list[tuple[dict[str, Any], dict[str, Any], list[str | int]]] = []
        for candidate in self._candidates(target):
            placed = _place(base, self.old_schema, target.path, candidate, self._synth)
            if placed is None:
                continue
            body, where = placed
            stored = self._stored(body)
            if stored is None:
                # the candidate reaches a node whose old CEL rules test other fields
                body = _repaired(body, self.old, self._synth)
                stored = self._stored(body)
            if stored is None:
                continue
            found = self._create_or_read(stored, where, target)
            if found is not None:
                return found
            if len(tried) < _MAX_PAIRS:
                tried.append((stored, body, where))
        if transition:
            return self._update(tried, target)
        return self._with_new_requirements(tried, target) or self._stored_otherwise(tried, target)

    def _with_new_requirements(
        self, tried: list[tuple[dict[str, Any], dict[str, Any], list[str | int]]], target: Target
    ) -> Witness | None:
        """Where the new schema refuses a candidate first for fields it now requires
        elsewhere (which keep its CEL rules from running): those fields set, as both
        schemas accept them, and the candidate tried again."""
        for _, body, where in tried:
            repaired = body
            for violation in self.new.create(body).violations:
                at = values.steps(violation.path)
                if violation.detail != "Required value" or _under(at, where):
                    continue
                if not all(isinstance(step, str) for step in at):
                    continue
                path = tuple(schemas.segment(str(step)) for step in at)
                field = _node_at(self.new_schema, path)
                if field is None or _node_at(self.old_schema, path) is None:
                    continue
                placed = _place(repaired, self.old_schema, path, self._synth.value(field, 1),
                                self._synth)  # fmt: skip
                repaired = placed[0] if placed is not None else repaired
            stored = None if repaired is body else self._stored(repaired)
            found = None if stored is None else self._create_or_read(stored, where, target)
            if found is not None:
                return found
        return None

    def _stored_otherwise(
        self, tried: list[tuple[dict[str, Any], dict[str, Any], list[str | int]]], target: Target
    ) -> Witness | None:
        """Where no stored object reads back changed (the old CRD wrote its default into
        every one it stored): the same CREATE stores another object under the new CRD
        than under the old one (a default removed or changed)."""
        if target.harm is Harm.REFUSED_ON_WRITE:
            return None
        for stored, body, where in tried:
            if self.new.create(body).refused:
                continue
            written = self.new.read(body)
            changed = _changes_under(stored, written, where)
            if changed:
                return Witness(
                    target.version,
                    "create",
                    copy.deepcopy(stored),
                    "reads back changed",
                    changed,
                    object=copy.deepcopy(body),
                    read_back=copy.deepcopy(written),
                )
        return None

    def _status(self, target: Target) -> Witness | None:
        """Under the status subresource: the minimal object created, then a /status write
        of a candidate the old CRD accepts, which the new one refuses, or reads back
        changed once written while the old CRD was live."""
        base = self._base(target)
        stored = None if base is None else self._stored(base)
        if base is None or stored is None:
            return None
        for candidate in self._candidates(target):
            placed = _place(base, self.old_schema, target.path, candidate, self._synth)
            if placed is None:
                continue
            body, where = placed
            attempt = self.old.status(body, stored)
            if attempt.refused or attempt.not_evaluated:
                continue
            written = self.old.status_written(body, stored)
            if not self._kept(written):
                continue
            if target.harm is not Harm.CHANGED_ON_READ:
                own = _own(self.new.status(body, self.new.read(stored)).violations, where)
                if own is not None:
                    return Witness(
                        target.version,
                        "status",
                        copy.deepcopy(stored),
                        "refuses",
                        _message(own, status=True),
                        object=copy.deepcopy(written),
                    )
            if target.harm is Harm.REFUSED_ON_WRITE:
                continue
            read, changed = _read_back(written, self.new.schema, where)
            if changed:
                return Witness(
                    target.version,
                    "status",
                    copy.deepcopy(stored),
                    "reads back changed",
                    changed,
                    object=copy.deepcopy(written),
                    read_back=copy.deepcopy(read),
                )
        return None

    def _base(self, target: Target) -> dict[str, Any] | None:
        """The minimal object of the old schema, made once: the same for every change."""
        key = (target.group, target.kind, target.version)
        if key not in self._bases:
            base = self._synth.root(self.old_schema, target)
            if base is not None and target.status_subresource:
                base.pop("status", None)
            self._bases[key] = None if base is None else _repaired(base, self.old, self._synth)
        return self._bases[key]

    def _stored(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """What the old CRD stores of ``body`` written as a CREATE, None where it refuses
        (read-only: it shares parts with ``body``; a witness holds a copy)."""
        stored = self.old.read(body)
        attempt = self.old.create_decoded(stored)
        if attempt.refused or attempt.not_evaluated:
            return None
        return stored if self._kept(stored) else None

    def _kept(self, stored: dict[str, Any]) -> bool:
        """Whether the storage version holds ``stored`` unchanged."""
        if self.stored_as is None:
            return True
        return not readback.operations(readback.coerce(stored, self.stored_as)[1])

    def _create_or_read(
        self, stored: dict[str, Any], where: list[str | int], target: Target
    ) -> Witness | None:
        version = target.version
        read, patch = readback.coerce(stored, self.new.schema)
        if target.harm is not Harm.CHANGED_ON_READ:
            # a CREATE's body decodes as the stored object does: only metadata differs
            attempt = self.new.create_decoded(judge.fresh_copy(read))
            own = _own(attempt.violations, where)
            if own is not None:
                return Witness(version, "create", copy.deepcopy(stored), "refuses", _message(own))
        if target.harm is Harm.REFUSED_ON_WRITE:
            return None
        changed = _patched_under(patch, where)
        if changed:
            return Witness(
                version,
                "read",
                copy.deepcopy(stored),
                "reads back changed",
                changed,
                read_back=copy.deepcopy(read),
            )
        return None

    def _update(
        self, tried: list[tuple[dict[str, Any], dict[str, Any], list[str | int]]], target: Target
    ) -> Witness | None:
        """A transition rule judges an UPDATE: one stored candidate updated to another."""
        for stored, _, _ in tried:
            for _, body, where in tried:
                if schemas.same_value(stored, body) or self.old.update(body, stored).refused:
                    continue
                own = _own(self.new.update(body, self.new.read(stored)).violations, where)
                if own is not None:
                    return Witness(
                        target.version,
                        "update",
                        copy.deepcopy(stored),
                        "refuses",
                        _message(own),
                        object=copy.deepcopy(self.old.read(body)),
                    )
        return None

    def _candidates(self, target: Target) -> Iterator[Any]:
        old = _node_at(self.old_schema, target.path)
        new = _node_at(self.new_schema, target.path)
        seen: list[Any] = []
        for candidate in _ranked(target, old or {}, new or {}, self._synth):
            if candidate is not _ABSENT and any(
                schemas.deep_equal(candidate, s) for s in seen if s is not _ABSENT
            ):
                continue
            if candidate is _ABSENT and any(s is _ABSENT for s in seen):
                continue
            seen.append(candidate)
            yield candidate


def _ranked(
    target: Target, old: values.Schema, new: values.Schema, synth: _Synthesis
) -> Iterator[Any]:
    """The rule's own candidates first, then values of every kind."""
    code = target.code
    if code in ("UG202", "UG212", "UG219"):
        yield _ABSENT
    if code == "UG205":
        yield None
    if code == "UG207":
        kept = new.get("enum") or []
        yield from (v for v in old.get("enum") or [] if not values.in_enum(v, kept))
    if code == "UG211" and isinstance(new.get("pattern"), str):
        refused = regex_inclusion.refusal(old.get("pattern"), new["pattern"])
        if refused is not None and refused.example is not None:
            yield refused.example
    if code in ("UG214", "UG217", "UG216"):
        yield from _structural(old, synth)
    if code == "UG218":
        yield from _combined(old, new, synth)
    if code == "UG213" and isinstance(target.new, str):
        yield from _named_by_rule(target.new, old, synth)
        yield from _quoted_by_rule(target.new, old, synth)
    yield from _bounds(old, new, synth)
    minimal = synth.value(old, 0)
    yield minimal
    yield _ABSENT
    yield from old.get("enum") or []
    if old.get("nullable") or not old.get("type"):
        yield None
    yield from _structural(old, synth)
    if old.get("type") in (None, "string") or old.get("x-kubernetes-int-or-string"):
        yield from _FORMAT_EXAMPLES
    yield from _SCALARS


def _named_by_rule(rule: str, old: values.Schema, synth: _Synthesis) -> Iterator[Any]:
    """For a CEL rule at an object: the fields it names set, to the literal it compares each
    with where it does (``self.mode == 'DaemonSet'``): all of them, then each alone."""
    minimal = synth.value(old, 0)
    properties = old.get("properties") or {}
    if not isinstance(minimal, dict) or not properties:
        return
    compared: dict[str, Any] = {}
    for name, operator, literal in _COMPARED.findall(rule):
        value = json.loads(literal) if literal[0] != "'" else literal[1:-1]
        if isinstance(value, int) and not isinstance(value, bool):
            value += {">": 1, "<": -1}.get(operator, 0)
        compared.setdefault(name, value)
    named = {
        name: compared[name] if name in compared else synth.value(properties[name], 1)
        for name in dict.fromkeys(_NAMED.findall(rule))
        if isinstance(properties.get(name), dict)
    }
    if named:
        yield {**minimal, **named}
        for name, value in named.items():
            yield {**minimal, name: value}


def _combined(old: values.Schema, new: values.Schema, synth: _Synthesis) -> Iterator[Any]:
    """For a combinator changed at an object: the fields each new branch requires set
    (``not: {required: [any, all]}`` refuses both at once), then every field set."""
    minimal = synth.value(old, 0)
    properties = old.get("properties") or {}
    if not isinstance(minimal, dict) or not properties:
        return
    branches = [new.get("not"), *(new.get(key) or [] for key in ("oneOf", "anyOf", "allOf"))]
    flat = [b for group in branches for b in (group if isinstance(group, list) else [group])]
    sets = [b.get("required") for b in flat if isinstance(b, Mapping)]
    sets.append(list(properties))
    for names in sets:
        if isinstance(names, list) and names:
            yield {
                **minimal,
                **{
                    name: synth.value(properties[name], 1)
                    for name in names
                    if isinstance(properties.get(name), dict)
                },
            }


def _quoted_by_rule(rule: str, old: values.Schema, synth: _Synthesis) -> Iterator[Any]:
    """For a CEL rule: the strings it quotes (and the empty one), as the value, a map's key
    or a list's item (``self.all(key, !key.contains('*'))``)."""
    quoted = [text[1:-1] for text in _QUOTED.findall(rule)]
    extra = old.get("additionalProperties")
    items = values.item_schema(old)
    for text in dict.fromkeys([*quoted, *(q + "a" for q in quoted), ""]):
        yield text
        if isinstance(extra, Mapping):
            yield {text: synth.value(extra, 1)}
        if items is not None and items.get("type") == "string":
            yield [text]


def _structural(old: values.Schema, synth: _Synthesis) -> Iterator[Any]:
    """An unknown field, duplicate items, an embedded resource's unknown metadata."""
    minimal = synth.value(old, 0)
    if isinstance(minimal, dict):
        yield {**minimal, _UNKNOWN_FIELD: "a"}
        if "metadata" in minimal or old.get("x-kubernetes-embedded-resource"):
            meta = minimal.get("metadata")
            known = meta if isinstance(meta, dict) else {}
            yield {**minimal, "metadata": {**known, _UNKNOWN_FIELD: "a"}}
    items = values.item_schema(old)
    if old.get("type") == "array" or items is not None:
        item = synth.value(items or {}, 1)
        yield [item]
        yield [item, item]
        if isinstance(item, dict):
            yield [{**item, _UNKNOWN_FIELD: "a"}]


def _bounds(old: values.Schema, new: values.Schema, synth: _Synthesis) -> Iterator[Any]:
    """Values at the old bounds and just past the new ones."""
    for side in (new, old):
        for key, step in (("minimum", -1), ("maximum", 1)):
            bound = side.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                exclusive = side.get("exclusive" + key.capitalize())
                yield bound
                yield bound + step if exclusive is not True else bound - step
                yield bound + step * 0.5
    factor = new.get("multipleOf")
    if isinstance(factor, int | float) and not isinstance(factor, bool):
        base = old.get("multipleOf") or 1
        yield from (base * k for k in range(1, 11))
        yield factor / 2
    item = synth.value(values.item_schema(old) or {}, 1)
    for side in (new, old):
        for key, step in (("minLength", -1), ("maxLength", 1)):
            bound = side.get(key)
            if isinstance(bound, int) and 0 <= bound + step <= _LONGEST:
                yield "a" * (bound + step)
                yield "a" * bound
        for key, step in (("minItems", -1), ("maxItems", 1)):
            bound = side.get(key)
            if isinstance(bound, int) and 0 <= bound + step <= _MOST_ITEMS:
                yield [item] * (bound + step)
        for key, step in (("minProperties", -1), ("maxProperties", 1)):
            bound = side.get(key)
            if isinstance(bound, int) and 0 <= bound + step <= _MOST_ITEMS:
                extra = side.get("additionalProperties")
                value = synth.value(extra if isinstance(extra, dict) else {}, 1)
                yield dict.fromkeys((f"k{i}" for i in range(bound + step)), value)


class _Synthesis:
    """The first value a schema node accepts, of the smallest kind."""

    def __init__(self, kube_version: tuple[int, int]) -> None:
        self.validator = OpenAPIValidator(kube_version)
        self.kube_version = kube_version
        self._values: dict[int, tuple[values.Schema, Any]] = {}

    def accepts(self, value: Any, node: values.Schema) -> bool:
        found = self.validator.validate(value, node, "")
        self.validator.unchecked.clear()
        return not found

    def root(self, schema: values.Schema, target: Target) -> dict[str, Any] | None:
        body = self.value(schema, 0)
        if not isinstance(body, dict):
            return None
        meta = body.get("metadata")
        return {
            **body,
            "apiVersion": f"{target.group}/{target.version}",
            "kind": target.kind,
            "metadata": {**(meta if isinstance(meta, dict) else {}), "name": NAME},
        }

    def value(self, node: values.Schema, depth: int) -> Any:
        """Read-only: the value is shared by every caller asking for the same node."""
        known = self._values.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        first: Any = None
        found: Any = None
        for count, candidate in enumerate(self._candidates(node, depth)):
            if count == 0:
                first = candidate
            if self.accepts(candidate, node):
                found = candidate
                break
        else:
            found = {} if first is None else first
        self._values[id(node)] = (node, found)
        return found

    def _candidates(self, node: values.Schema, depth: int) -> Iterator[Any]:
        enum = [member for member in node.get("enum") or [] if member is not None]
        yield from enum
        kind = node.get("type")
        if node.get("x-kubernetes-int-or-string"):
            yield from self._strings(node)
            yield from self._numbers(node, integer=True)
        elif kind == "object" or (kind is None and "properties" in node):
            yield from self._objects(node, depth)
        elif kind == "array":
            yield from self._arrays(node, depth)
        elif kind == "string":
            yield from self._strings(node)
        elif kind in ("integer", "number"):
            yield from self._numbers(node, integer=kind == "integer")
        elif kind == "boolean":
            yield from (False, True)
        else:
            yield from ({}, "a", 0)

    def _objects(self, node: values.Schema, depth: int) -> Iterator[dict[str, Any]]:
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        base: dict[str, Any] = {}
        if depth < _MAX_DEPTH:
            for name in node.get("required") or []:
                child = properties.get(name, extra if isinstance(extra, dict) else {})
                base[name] = self.value(child if isinstance(child, dict) else {}, depth + 1)
        if node.get("x-kubernetes-embedded-resource"):
            base = {"apiVersion": "v1", "kind": "Witness", **base}
        least = node.get("minProperties")
        if isinstance(least, int) and len(base) < least and isinstance(extra, dict):
            value = self.value(extra, depth + 1)
            for index in range(least - len(base)):
                base[f"k{index}"] = value
        yield base
        if depth < _MAX_DEPTH:
            # a oneOf or anyOf of required properties: one of them set
            for name, child in properties.items():
                if name not in base and isinstance(child, dict):
                    yield {**base, name: self.value(child, depth + 1)}

    def _arrays(self, node: values.Schema, depth: int) -> Iterator[list[Any]]:
        least = node.get("minItems")
        if not isinstance(least, int) or least <= 0:
            yield []
            return
        items = values.item_schema(node) or {}
        first = self.value(items, depth + 1)
        yield [first] * least
        if isinstance(first, str):
            yield [f"{first}{i}" for i in range(least)]
        if isinstance(first, int) and not isinstance(first, bool):
            yield [first + i for i in range(least)]

    def _strings(self, node: values.Schema) -> Iterator[str]:
        shortest = node.get("minLength")
        least = shortest if isinstance(shortest, int) else 0
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            found = regex_inclusion.refusal(pattern, _NOTHING)
            if found is not None and found.example is not None:
                yield found.example
                yield found.example + "a" * max(0, least - len(found.example))
        name = node.get("format")
        check = formats.checker(name, self.kube_version) if isinstance(name, str) else None
        if check is not None:
            yield from (example for example in _FORMAT_EXAMPLES if check(example))
        yield "a" * max(1, least)
        yield ""

    def _numbers(self, node: values.Schema, integer: bool) -> Iterator[int | float]:
        factor = node.get("multipleOf")
        for key, step in (("minimum", 1), ("maximum", -1)):
            bound = node.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                start = int(bound) if integer and float(bound).is_integer() else bound
                yield start
                yield start + step
                if isinstance(factor, int | float) and factor:
                    yield (int(bound // factor) + (1 if step > 0 else 0)) * factor
        yield 0
        if isinstance(factor, int | float) and not isinstance(factor, bool):
            yield factor
        yield 1


def _repaired(base: dict[str, Any], old: judge.Judge, synth: _Synthesis) -> dict[str, Any]:
    """``base`` with the fields the old CEL rules it fails test with ``has()`` set (upjet's
    ``... || has(self.forProvider.name) || ...``: a required parameter), a few rounds."""
    for _ in range(_REPAIRS):
        refused = old.create(base).violations
        if not refused or any(v.check != "rule" for v in refused):
            return base
        repaired = base
        for violation in refused:
            at = values.steps(violation.path)
            if not all(isinstance(step, str) for step in at):
                continue
            where = tuple(schemas.segment(str(step)) for step in at)
            node = _node_at(old.schema, where)
            rules = (node or {}).get("x-kubernetes-validations") or []
            for rule in rules:
                text = rule.get("rule") if isinstance(rule, Mapping) else None
                for chain in _TESTED.findall(text if isinstance(text, str) else ""):
                    path = _unescaped(node or {}, where, chain.split(".")[1:])
                    field = None if path is None else _node_at(old.schema, path)
                    if path is None or field is None or _holds(repaired, path):
                        continue
                    placed = _place(repaired, old.schema, path, synth.value(field, 1), synth)
                    repaired = placed[0] if placed is not None else repaired
        if repaired is base:
            return base
        base = repaired
    return base


def _unescaped(node: values.Schema, where: schemas.Path, names: list[str]) -> schemas.Path | None:
    """The schema path of a chain of CEL field names below ``node`` (at ``where``): a
    property CEL escapes (``__namespace__``) by its own name."""
    path = list(where)
    for cel_name in names:
        properties = node.get("properties")
        found = properties if isinstance(properties, Mapping) else {}
        name = next((n for n in found if cel_types.escape(n) == cel_name), None)
        if name is None or not isinstance(found[name], Mapping):
            return None
        path.append(schemas.segment(name))
        node = found[name]
    return tuple(path)


def _holds(value: Any, path: schemas.Path) -> bool:
    for part in path:
        if not isinstance(value, dict) or _name(part) not in value:
            return False
        value = value[_name(part)]
    return True


def _node_at(root: values.Schema, path: schemas.Path) -> values.Schema | None:
    node: values.Schema | None = root
    for part in path:
        if node is None:
            return None
        node = _child(node, part, resource=node is root)
    return node


def _child(node: values.Schema, part: str, resource: bool) -> values.Schema | None:
    """The schema of the value at ``part`` inside ``node`` (as ``schema.children`` has it,
    looked up rather than listed: a spec may have hundreds of properties)."""
    if part == schemas.ITEMS:
        found = values.item_schema(node)
    elif part == schemas.ADDITIONAL:
        extra = node.get("additionalProperties")
        found = {} if extra is True else extra if isinstance(extra, Mapping) else None
    else:
        properties = node.get("properties")
        found = properties.get(_name(part)) if isinstance(properties, Mapping) else None
        found = found if isinstance(found, Mapping) else None
    if found is not None:
        return found
    if resource or node.get("x-kubernetes-embedded-resource"):
        meta = schemas.RESOURCE_FIELDS.get(part)
        if meta is not None:
            return meta
    if schemas.preserves_unknown_fields(node):
        return schemas.ANY_VALUE
    return None


def _name(part: str) -> str:
    """A property's name from its path segment (quoted where it is not plain)."""
    return str(json.loads(part[1:-1])) if part.startswith("[") else part


def _place(
    base: dict[str, Any],
    root: values.Schema,
    path: schemas.Path,
    value: Any,
    synth: _Synthesis,
) -> tuple[dict[str, Any], list[str | int]] | None:
    """``base`` with ``value`` at ``path`` (made where missing, each level with what its
    schema requires), and the steps of the value's field path; None where the path cannot
    hold a value."""
    steps: list[str | int] = []

    def put(container: Any, node: values.Schema, rest: schemas.Path) -> Any:
        if not rest:
            return value
        part, below = rest[0], rest[1:]
        child = _child(node, part, resource=node is root)
        if child is None and value is _ABSENT and not below and part != schemas.ITEMS:
            child = {}  # a field the old schema lacks is absent from what it stores
        if child is None:
            raise _Unplaceable
        if part == schemas.ITEMS:
            items = container if isinstance(container, list) and container else None
            first = items[0] if items else synth.value(child, 1)
            steps.append(0)
            inner = put(first, child, below)
            tail = items[1:] if items else []
            return tail if inner is _ABSENT else [inner, *tail]
        if not isinstance(container, dict):
            container = synth.value(node, 1)
            if not isinstance(container, dict):
                raise _Unplaceable
        key = next(iter(container), "a") if part == schemas.ADDITIONAL else _name(part)
        container = _room_for(container, node, key)
        steps.append(key)
        current = container.get(key)
        inner = put(current if current is not None else synth.value(child, 1), child, below)
        result = {k: v for k, v in container.items() if k != key}
        if inner is not _ABSENT:
            result[key] = inner
        return result

    try:
        placed = put(base, root, path)
    except _Unplaceable:
        return None
    return (placed, steps) if isinstance(placed, dict) else None


def _room_for(container: dict[str, Any], node: values.Schema, key: str) -> dict[str, Any]:
    """``container`` less the fields it need not hold where ``key`` would be one too many
    (a minimal object filled to its minProperties with another field than ``key``)."""
    most = node.get("maxProperties")
    if key in container or not isinstance(most, int) or len(container) < most:
        return container
    required = set(node.get("required") or [])
    optional = [name for name in container if name not in required]
    drop = set(optional[: len(container) + 1 - most])
    return {name: value for name, value in container.items() if name not in drop}


class _Unplaceable(Exception):
    pass


def _own(found: tuple[Violation, ...], where: list[str | int]) -> Violation | None:
    """The first refusal at or below the change's place."""
    return next((v for v in found if _under(values.steps(v.path), where)), None)


def _read_back(
    stored: dict[str, Any], schema: values.Schema, where: list[str | int]
) -> tuple[Any, str]:
    """What a GET returns of ``stored`` under ``schema``, and its changes at or below
    ``where`` as the witness's message; empty where nothing there changed."""
    read, patch = readback.coerce(stored, schema)
    return read, _patched_under(patch, where)


def _patched_under(patch: list[readback.Operation], where: list[str | int]) -> str:
    """A read-back patch's changes at or below ``where``, as the witness's message."""
    under = [(op, path) for op, path in readback.operations(patch) if _under(_pointer(path), where)]
    return "; ".join(f"{op} {path}" for op, path in under)


def _changes_under(before: Any, after: Any, where: list[str | int]) -> str:
    """The RFC 6902 operations from ``before`` to ``after`` at or below ``where``, as the
    witness's message ("add /spec/a; remove /spec/b"); empty where nothing there changed."""
    return "; ".join(
        f"{op['op']} {op['path']}"
        for op in jsonpatch.make_patch(before, after).patch
        if _under(_pointer(op["path"]), where)
    )


def _under(steps: list[str | int], where: list[str | int]) -> bool:
    return steps[: len(where)] == where


def _pointer(pointer: str) -> list[str | int]:
    parts: list[str | int] = []
    for raw in pointer.split("/")[1:]:
        text = raw.replace("~1", "/").replace("~0", "~")
        parts.append(int(text) if text.isdigit() else text)
    return parts


def _message(found: Violation, status: bool = False) -> str:
    """The part of the apiserver's message the model is sure of: the field path, and the
    reason where the check names it. A combinator's error is no field error of its own
    (apiextensions' kubeOpenAPIResultToFieldErrors): it names the path, quoted, within what
    was validated, the object or, on a /status write, its status."""
    if found.check in _COMBINATORS:
        name = _openapi_path(found.path)
        if status:
            name = name.removeprefix("status").removeprefix(".")
        return f'"{name}" {_COMBINATORS[found.check]}'
    if found.detail == "Required value":
        reason = "Required value"
    elif found.check == "rule":
        reason = _RULE_REASONS.get(found.reason or "", "Invalid value")
    elif found.check in ("embedded", "rule-error"):
        return f"{_field_path(found.path)}:"
    else:
        reason = _REASONS.get(found.check, "Invalid value")
    if found.check in _FIELD_PATHED:
        return f"{_field_path(found.path)}: {reason}" if found.path else reason
    return f"{_openapi_path(found.path)}: {reason}" if found.path else reason


def _field_path(path: str) -> str:
    """The model's path as a field error of a CEL rule or list type prints it: a map key
    unquoted in brackets (``labels[a]``)."""
    return _KEYED.sub(lambda key: f"[{json.loads(key.group(1))}]", path)


def _openapi_path(path: str) -> str:
    """The model's path as kube-openapi's validation names it: a map key as a field
    (``proxyConnectHeader.a``)."""
    return _KEYED.sub(lambda key: f".{json.loads(key.group(1))}", path)


def minimal(
    schema: values.Schema, group: str, kind: str, version: str, kube_version: tuple[int, int]
) -> dict[str, Any] | None:
    """The smallest object ``schema`` (a version's root) accepts as a CREATE, as stored."""
    checker = judge.Judge(schema, kube_version)
    synth = _Synthesis(kube_version)
    body = synth.root(schema, Target(group, kind, version, (), ""))
    if body is None:
        return None
    body = _repaired(body, checker, synth)
    attempt = checker.create(body)
    if attempt.refused or attempt.not_evaluated:
        return None
    return copy.deepcopy(checker.read(body))


def unreachable(version: str, stored: dict[str, Any]) -> Witness:
    """A GET at a version the new CRD no longer serves, of an object stored at it: 404."""
    return Witness(version, "read", stored, "refuses", _NOT_FOUND)


def crd_refused(version: str, stored: dict[str, Any]) -> Witness:
    """Applying a CRD that drops ``version``, where an object was stored at it, is refused."""
    return Witness(version, "apply-crd", stored, "refuses", _STORED_MISSING.format(version))


def rollback_refused(version: str, stored: dict[str, Any], moved_to: str) -> Witness:
    """Once the new CRD, whose storage version is ``moved_to``, is applied (``stored``
    written at ``version`` before), applying the old CRD again, which does not list
    ``moved_to``, is refused: the apiserver put ``moved_to`` in status.storedVersions."""
    return Witness(version, "apply-old-crd", stored, "refuses", _STORED_MISSING.format(moved_to))


def shown_by(
    found: Witness,
    written: values.Schema,
    operated: values.Schema,
    kube_version: tuple[int, int],
    stored_as: values.Schema | None = None,
) -> bool:
    """Whether another pair of a CRD's version schemas (``written``, where ``stored`` is
    written, stored as ``stored_as``; ``operated``, where the operation is made: the old
    CRD's for a UG110 witness written under the new one) does the same with the witness:
    stores ``stored`` unchanged, then refuses the operation, or reads back ``read_back``."""
    at_write, at_op = judge.Judge(written, kube_version), judge.Judge(operated, kube_version)
    stored = copy.deepcopy(dict(found.stored))
    attempt = at_write.create(stored)
    if attempt.refused or attempt.not_evaluated or at_write.read(stored) != stored:
        return False
    if stored_as is not None and readback.operations(readback.coerce(stored, stored_as)[1]):
        return False
    body = copy.deepcopy(dict(found.object or {}))
    if found.object is not None and not _written_alike(at_write, found.operation, body, stored):
        return False
    if found.apiserver == "refuses":
        if found.operation == "create":
            return at_op.create(judge.fresh_copy(stored)).refused
        if found.operation == "update":
            return at_op.update(body, at_op.read(stored)).refused
        return found.operation == "status" and at_op.status(body, at_op.read(stored)).refused
    if found.operation == "status":
        read = at_op.read(at_write.status_written(body, stored))
    else:
        read = at_op.read(body if found.operation == "create" else stored)
    expected = dict(found.read_back or {})
    return {**read, "apiVersion": None} == {**expected, "apiVersion": None}


def _written_alike(
    at_write: judge.Judge, operation: str, body: dict[str, Any], stored: dict[str, Any]
) -> bool:
    """Whether a version's schema takes a witness's ``object`` as it is: through /status
    onto ``stored`` (``status``), as an UPDATE of it (``update``), or as the body a CREATE
    stores as ``stored`` (``create``)."""
    if operation == "status":
        return not at_write.status(body, stored).refused and (
            at_write.status_written(body, stored) == body
        )
    if operation == "update":
        return not at_write.update(body, stored).refused and at_write.read(body) == body
    return at_write.read(body) == stored


def read_at_another_version(
    found: Witness, operated: values.Schema, kept_as: values.Schema | None
) -> Witness | None:
    """The witness with what a GET at another served version than it was written at
    returns. The apiserver defaults what it reads from etcd by the schema of the version
    the object is kept as there (``kept_as``; None where the new CRD has no such version:
    the version read's defaults are taken), then prunes by the version read, whose
    defaults it does not fill (tests/cluster/test_replay.py). None where none of the
    changes the witness names is left."""
    if found.apiserver != "reads back changed" or found.operation not in ("read", "status"):
        return found
    read = dict((found.object if found.operation == "status" else found.stored) or {})
    made: set[str] = set()
    steps = (operated,) if kept_as is None else (kept_as, _without_defaults(operated))
    for schema in steps:
        read, patch = readback.coerce(read, schema)
        made.update(f"{op} {path}" for op, path in readback.operations(patch))
    kept = [part for part in found.message.split("; ") if part in made]
    if not kept:
        return None
    return replace(found, message="; ".join(kept), read_back=copy.deepcopy(read))


def _without_defaults(node: values.Schema) -> values.Schema:
    stripped = {key: value for key, value in node.items() if key != "default"}
    properties = node.get("properties")
    if isinstance(properties, dict):
        stripped["properties"] = {
            name: _without_defaults(child) if isinstance(child, dict) else child
            for name, child in properties.items()
        }
    for key in ("additionalProperties", "items"):
        if isinstance(node.get(key), dict):
            stripped[key] = _without_defaults(node[key])
    return stripped


# The field managers of an ``apply`` witness (UG215): the first applies again after the new CRD.
APPLIERS = ("witness-a", "witness-b")


def applied(builder: Builder, target: Target) -> Witness | None:
    """UG215's witness, a server-side apply (``target.old``, ``target.new``: the map types).
    From granular to atomic: two managers apply a key each while the old CRD is live; the
    first applies its own again and the apiserver refuses, a conflict with the second (who
    owns the whole map now). From atomic to granular: one manager applies the map, then
    leaves a key out, which the map keeps (the manager owned the map, not the key). Under
    status with the status subresource, the applies are made through /status."""
    base = builder._base(target)
    node = _node_at(builder.old_schema, target.path)
    if base is None or node is None or _owned_whole_above(builder.new_schema, target.path):
        return None
    least = builder._synth.value(node, 1)
    if not isinstance(least, dict):
        return None
    keys = _more_keys(node, least, builder._synth)
    if not keys:
        if target.old == "granular":
            return _changed_key(builder, target, base, least)
        return None
    bodies = []
    for mapped in (dict(least), {**least, **dict(keys[:1])}, {**least, **dict(keys)}):
        placed = _place(base, builder.old_schema, target.path, mapped, builder._synth)
        if placed is None or builder._stored(placed[0]) is None:
            return None
        bodies.append(placed)
    (fewer, _), (one, where), (every, _) = bodies
    if target.old == "granular":
        return _conflict(builder, target, fewer if len(keys) == 1 else one, every, where)
    return _kept(builder, target, every, fewer if len(keys) == 1 else one, where)


def _more_keys(node: values.Schema, least: dict[str, Any], synth: _Synthesis) -> list[Any]:
    """Two keys (or the one there is) a map at ``node`` may hold besides ``least``'s, with
    a value each."""
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        value = synth.value(extra, 1)
        return [(key, value) for key in ("a", "b", "c") if key not in least][:2]
    properties = node.get("properties")
    found = properties if isinstance(properties, Mapping) else {}
    return [
        (name, synth.value(child, 1))
        for name, child in found.items()
        if name not in least and isinstance(child, Mapping)
    ][:2]


def _conflict(
    builder: Builder, target: Target, first: dict[str, Any], both: dict[str, Any],
    where: list[str | int], second: dict[str, Any] | None = None,
    again: dict[str, Any] | None = None,
) -> Witness | None:  # fmt: skip
    """The first manager applies ``first``, the second ``second`` (by default ``both``,
    one key more), which stores ``both``; after the new CRD the first applies ``again``
    (by default ``first`` unchanged): a conflict at the map."""
    at = _managed_path(first, builder.old_schema, where)
    stored = builder._stored(both)
    if at is None or stored is None:
        return None
    a, b = APPLIERS
    second = both if second is None else second
    again = first if again is None else again
    through = ' with subresource "status"' if _through_status(target) else ""
    return Witness(
        target.version,
        "apply",
        copy.deepcopy(stored),
        "refuses",
        f'conflict with "{b}"{through}: {at}',
        object=copy.deepcopy(again),
        applied=({"manager": a, "object": copy.deepcopy(first)},
                 {"manager": b, "object": copy.deepcopy(second)}),
    )  # fmt: skip


def _owned_whole_above(root: values.Schema, path: schemas.Path) -> bool:
    """Whether a list or map enclosing ``path`` is atomic in ``root``: after the new CRD,
    server-side apply owns and names that one, not the map (left unproven)."""
    node: values.Schema | None = root
    for part in path:
        if node is None:
            return False
        if node.get("type") == "array" or "items" in node:
            if (node.get("x-kubernetes-list-type") or "atomic") == "atomic":
                return True
        elif node.get("x-kubernetes-map-type") == "atomic":
            return True
        node = _child(node, part, resource=node is root)
    return False


def _through_status(target: Target) -> bool:
    return target.status_subresource and target.path[:1] == ("status",)


def _changed_key(
    builder: Builder, target: Target, base: dict[str, Any], least: dict[str, Any]
) -> Witness | None:
    """Where the map can hold no key more (every one required): the first manager applies
    it whole, the second all but one key (the first's holds the object valid), and after
    the new CRD the first changes that key: a conflict at the map, where the granular map
    let it (the second never applied the key)."""
    keyed = _node_at(builder.old_schema, target.path[:-1]) if target.path[-1:] == (
        schemas.ITEMS,) else None  # fmt: skip
    list_keys = (keyed or {}).get("x-kubernetes-list-map-keys") or []
    first = _place(base, builder.old_schema, target.path, least, builder._synth)
    if first is None:
        return None
    for key, value in least.items():
        if key in list_keys:
            continue
        for other in _other_values(value, builder._synth, _node_at(
                builder.old_schema, (*target.path, schemas.segment(key)))):  # fmt: skip
            changed = {**least, key: other}
            again = _place(base, builder.old_schema, target.path, changed, builder._synth)
            if again is None or builder._stored(again[0]) is None:
                continue
            partial = {k: v for k, v in least.items() if k != key}
            second = _place(base, builder.old_schema, target.path, partial, builder._synth)
            found = None if second is None else _conflict(
                builder, target, first[0], first[0], first[1], second[0], again[0])  # fmt: skip
            if found is not None:
                return found
    return None


def _other_values(value: Any, synth: _Synthesis, node: values.Schema | None) -> list[Any]:
    """Values to try for a key in place of ``value``."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, str):
        return [f"{value}a", "b", "a"]
    if isinstance(value, int | float):
        return [value + 1, value - 1]
    items = None if node is None else values.item_schema(node)
    if isinstance(value, list) and items is not None:
        return [value[:-1]] if value else [[synth.value(items, 1)]]
    return []


def _kept(
    builder: Builder, target: Target, every: dict[str, Any], fewer: dict[str, Any],
    where: list[str | int],
) -> Witness | None:  # fmt: skip
    """The manager applies ``every``, then, after the new CRD, ``fewer``: the key it left out
    is kept (the old CRD would store ``fewer`` as applied)."""
    stored, meant = builder._stored(every), builder._stored(fewer)
    if stored is None or meant is None or builder.new.create(every).refused:
        return None
    read = builder.new.read(stored)
    changed = _changes_under(meant, read, where)
    if not changed:
        return None
    return Witness(
        target.version,
        "apply",
        copy.deepcopy(stored),
        "reads back changed",
        changed,
        object=copy.deepcopy(fewer),
        read_back=copy.deepcopy(read),
        applied=({"manager": APPLIERS[0], "object": copy.deepcopy(every)},),
    )


def _managed_path(body: dict[str, Any], root: values.Schema, where: list[str | int]) -> str | None:
    """The field path server-side apply names a conflict at (``.spec.l[name="x"].m``): an
    item of a map list by its keys; None through any other list (owned whole)."""
    text, node = "", root
    value: Any = body
    for step in where:
        if isinstance(step, int):
            keys = node.get("x-kubernetes-list-map-keys")
            if node.get("x-kubernetes-list-type") != "map" or not isinstance(keys, list):
                return None
            item = value[step]
            if not isinstance(item, dict) or any(key not in item for key in keys):
                return None
            text += "[" + ",".join(f"{key}={json.dumps(item[key])}" for key in sorted(keys)) + "]"
            child = values.item_schema(node)
        else:
            text += f".{step}"
            item = value[step]
            child = _child(node, schemas.segment(step), resource=node is root)
            if child is None:
                child = _child(node, schemas.ADDITIONAL, resource=False)
        if child is None:
            return None
        node, value = child, item
    return text
