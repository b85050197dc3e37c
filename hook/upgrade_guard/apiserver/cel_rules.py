"""``x-kubernetes-validations`` rules evaluated as the apiserver evaluates them
(apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``), on the CEL C++
runtime (cel-expr-python) with the Kubernetes libraries of :mod:`cel_library`.

``self`` is typed by the schema as Kubernetes types it (:mod:`cel_types`): integers, doubles
for ``number``, timestamps for ``date``/``date-time``, durations, bytes for ``byte``; only
declared properties are visible, under their escaped names, at the root and in embedded
resources with ``apiVersion``, ``kind`` and ``metadata`` as the apiserver puts them in.

Ratcheting (1.30+): a failing rule on a node whose value pairs with an equal old value
(or, where the node does not pair, whose nearest paired ancestor is equal) does not
refuse, unless the rule uses ``oldSelf``. Evaluation errors are never ratcheted. Rules
using ``oldSelf`` run only where an old value pairs (UPDATE).
"""

from __future__ import annotations

import base64
import datetime
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import ext_optional, ext_strings  # type: ignore[import-untyped]

from . import cel_library, cel_source, formats, values
from .cel_types import embedded, escape, with_type_and_object_meta
from .correlation import Correlation, old_map_list_item
from .violations import NotEvaluated, Violation

_OLD_SELF = re.compile(r"\boldSelf\b")
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1,
    "m": 60,
    "h": 3600,
}


@cache
def environment(kube_version: tuple[int, int]) -> Any:
    extensions: list[Any] = [ext_strings.ExtStrings()]
    if kube_version >= (1, 28):
        extensions.append(ext_optional.ExtOptional())
    return cel.NewEnv(
        variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
        extensions=extensions,
        functions=cel_library.functions(kube_version),
    )


@dataclass(frozen=True)
class Rule:
    """One compiled rule of a schema node, or why it cannot be evaluated here."""

    text: str
    program: Any
    message_program: Any
    message: str
    reason: str | None
    field_path: str
    uses_old_self: bool
    unavailable: str | None


@cache
def _compiled(kube_version: tuple[int, int], text: str) -> tuple[Any, str | None]:
    given = cel_source.for_runtime(text)
    try:
        return environment(kube_version).compile(given), None
    except Exception as err:  # the runtime raises plain RuntimeError with the checker's text
        issues = cel_source.as_written(str(err), text, given)
        first = issues.splitlines()[0] if issues else type(err).__name__
        return None, first.removeprefix("INVALID_ARGUMENT: ").strip()


def compile_rule(raw: dict[str, Any], kube_version: tuple[int, int]) -> Rule:
    text = str(raw.get("rule", ""))
    program, why = _compiled(kube_version, text)
    if raw.get("optionalOldSelf"):
        program, why = None, "optionalOldSelf rules are not evaluated by this validator"
    message_program = None
    if raw.get("messageExpression"):
        message_program, _ = _compiled(kube_version, str(raw["messageExpression"]))
    message = str(raw.get("message") or "").strip() or f"failed rule: {text.strip()}"
    return Rule(
        text=text,
        program=program,
        message_program=message_program,
        message=message,
        reason=raw.get("reason"),
        field_path=str(raw.get("fieldPath") or ""),
        uses_old_self=bool(_OLD_SELF.search(text)),
        unavailable=why,
    )


# Values as CEL sees them -------------------------------------------------------------------
def _duration(text: str) -> datetime.timedelta | str:
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    parts = _GO_DURATION_PART.findall(body)
    if parts and "".join(n + u for n, u in parts) == body:
        return sign * datetime.timedelta(seconds=sum(float(n) * _UNIT_SECONDS[u] for n, u in parts))
    return text


def _timestamp(text: str, date_only: bool) -> datetime.datetime | str:
    try:
        if date_only:
            day = datetime.date.fromisoformat(text)
            return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        parsed = datetime.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return text
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


class InvalidData(ValueError):
    """A value CEL cannot take as its schema types it: an integral float (``4.0``) where the
    schema says integer passes OpenAPI validation, but every rule reading it fails with
    "invalid data, expected int, got float64" (measured on v1.35.4)."""


_GO_TYPES = {
    bool: "bool",
    int: "int64",
    float: "float64",
    str: "string",
    dict: "map",
    list: "slice",
}
_ACCEPTS: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "number": (int, float),
    "integer": (int, float),
    "string": (str,),
    "object": (dict,),
    "array": (list,),
}


def to_cel(
    value: Any, schema: values.Schema | None, root: bool = False, dropped: list[str] | None = None
) -> Any:
    """``value`` as CEL sees it; raises :class:`InvalidData` for a value it cannot take.
    Inside objects such a value is left out and named in ``dropped``: the apiserver fails
    only the rules that read it, which cannot be told here, so those rules are not evaluated."""
    if value is None or schema is None:
        return value
    kind = schema.get("type")
    accepted = _ACCEPTS.get(str(kind))
    wrong_bool = isinstance(value, bool) and bool not in (accepted or (bool,))
    if accepted and (wrong_bool or not isinstance(value, accepted)):
        expected = {"boolean": "bool", "integer": "int", "number": "double"}.get(str(kind))
        got = _GO_TYPES.get(type(value), type(value).__name__)
        raise InvalidData(f"expected {expected or kind}, got {got}")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        if not properties and isinstance(additional, dict):
            return _convertible({k: (v, additional) for k, v in value.items()}, dropped)
        if not properties and schema.get("x-kubernetes-preserve-unknown-fields"):
            return value
        if root or embedded(schema):
            properties = with_type_and_object_meta(schema)["properties"]
        named = {escape(k): (v, properties[k]) for k, v in value.items() if k in properties}
        return _convertible({k: v for k, v in named.items() if k is not None}, dropped)
    if isinstance(value, list):
        items = values.item_schema(schema)
        return [to_cel(item, items, dropped=dropped) for item in value]
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "integer" and isinstance(value, float):
        raise InvalidData("expected int, got float64")
    if isinstance(value, str) and kind == "string":
        name = str(schema.get("format") or "")
        if name in ("date-time", "datetime"):
            return _timestamp(value, False) if formats.is_date_time(value) else value
        if name == "date":
            return _timestamp(value, True)
        if name == "duration":
            return _duration(value)
        if name == "byte":
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                return value
    return value


def _convertible(
    fields: dict[str, tuple[Any, values.Schema]], dropped: list[str] | None
) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for name, (item, schema) in fields.items():
        try:
            converted[name] = to_cel(item, schema, dropped=dropped)
        except InvalidData:
            if dropped is not None:
                dropped.append(name)
    return converted


_INVALID = object()
_PARTIAL = object()  # a value holding data CEL cannot read as its schema types it


# The walk ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ratchet:
    current: Correlation | None = None
    nearest: Correlation | None = None

    def key(self, name: str, root: bool) -> _Ratchet:
        if self.current is None:
            return self
        if root and name in ("apiVersion", "kind"):
            return _Ratchet()
        return _Ratchet(self.current.key(name), self.current)

    def index(self, i: int) -> _Ratchet:
        if self.current is None:
            return self
        return _Ratchet(self.current.index(i), self.current)

    def applies(self) -> bool:
        if self.current is not None:
            return self.current.equal()
        return self.nearest is not None and self.nearest.equal()


@dataclass
class Outcome:
    violations: list[Violation] = field(default_factory=list)
    not_evaluated: list[NotEvaluated] = field(default_factory=list)


class RuleEvaluator:
    """Evaluates the rules of one root schema; compiled rules are cached per node.

    Within one :meth:`forget` period, values met again (the same objects: a CREATE and
    the UPDATEs judged for one stored object share their unchanged subtrees) are
    converted and evaluated once; the cache holds those objects, so ids stay theirs.
    """

    def __init__(self, root: values.Schema, kube_version: tuple[int, int]) -> None:
        self.root = root
        self.kube_version = kube_version
        self.ratcheting = kube_version >= (1, 30)
        self._rules: dict[int, list[Rule]] = {}
        self._ruled: dict[int, list[tuple[str, values.Schema]]] = {}
        self._converted: dict[tuple[int, int, bool], tuple[Any, Any]] = {}
        self._results: dict[tuple[int, int, int], tuple[Any, Any, str, str | None]] = {}

    def forget(self) -> None:
        self._converted.clear()
        self._results.clear()

    def evaluate(
        self,
        obj: Any,
        old: Any = None,
        correlation: Correlation | None = None,
        ratcheting: bool = True,
    ) -> Outcome:
        """Rules over a whole object; with ``old``, as an UPDATE from ``old``
        (``correlation``: the pairing of ``obj`` with ``old``, when already made), ratcheted
        from 1.30 unless not ``ratcheting`` (a /status write before 1.33)."""
        outcome = Outcome()
        ratchet = _Ratchet()
        if old is not None and self.ratcheting and ratcheting:
            ratchet = _Ratchet(correlation or Correlation(obj, old, self.root))
        self._walk(obj, old, self.root, "", ratchet, True, outcome)
        return outcome

    def has_rules(self, schema: values.Schema) -> bool:
        return values.uses(schema, "x-kubernetes-validations")

    def _compiled_rules(self, schema: values.Schema) -> list[Rule]:
        key = id(schema)
        if key not in self._rules:
            self._rules[key] = [
                compile_rule(raw, self.kube_version)
                for raw in schema.get("x-kubernetes-validations") or []
            ]
        return self._rules[key]

    def _walk(
        self,
        value: Any,
        old: Any,
        schema: values.Schema,
        path: str,
        ratchet: _Ratchet,
        root: bool,
        outcome: Outcome,
    ) -> None:
        if value is None or not self.has_rules(schema):
            return
        if schema.get("x-kubernetes-validations"):
            self._node(value, old, schema, path, ratchet, root, outcome)
        for branch in schema.get("allOf") or []:
            self._walk(value, old, branch, path, _Ratchet(None, ratchet.nearest), root, outcome)
        if isinstance(value, dict):
            # Every map correlates by key, atomic ones too (apiextensions MapIsCorrelatable).
            old_map = old if isinstance(old, dict) else {}
            for key, child in self._ruled_properties(schema):
                if key in value:
                    where = values.child(path, key)
                    next_ratchet = ratchet.key(key, root)
                    self._walk(
                        value[key], old_map.get(key), child, where, next_ratchet, False, outcome
                    )
            additional = schema.get("additionalProperties")
            if isinstance(additional, dict) and self.has_rules(additional):
                properties = schema.get("properties") or {}
                for key, item in value.items():
                    if key not in properties:
                        where = values.keyed(path, key)
                        next_ratchet = ratchet.key(key, root)
                        self._walk(
                            item, old_map.get(key), additional, where, next_ratchet, False, outcome
                        )
        elif isinstance(value, list):
            items = values.item_schema(schema)
            if items is None or not self.has_rules(items):
                return
            old_list = old if isinstance(old, list) else []
            mapped = schema.get("x-kubernetes-list-type") == "map"
            for i, item in enumerate(value):
                old_item = old_map_list_item(schema, old_list, item) if mapped else None
                where = values.indexed(path, i)
                self._walk(item, old_item, items, where, ratchet.index(i), False, outcome)

    def _ruled_properties(self, schema: values.Schema) -> list[tuple[str, values.Schema]]:
        key = id(schema)
        found = self._ruled.get(key)
        if found is None:
            found = self._ruled[key] = [
                (name, child)
                for name, child in (schema.get("properties") or {}).items()
                if self.has_rules(child)
            ]
        return found

    def _cel_value(self, value: Any, schema: values.Schema, root: bool) -> Any:
        key = (id(value), id(schema), root)
        found = self._converted.get(key)
        if found is None:
            dropped: list[str] = []
            try:
                converted = to_cel(value, schema, root, dropped)
                found = (value, _PARTIAL if dropped else converted)
            except InvalidData:
                found = (value, _INVALID)
            self._converted[key] = found
        return found[1]

    def _node(
        self,
        value: Any,
        old: Any,
        schema: values.Schema,
        path: str,
        ratchet: _Ratchet,
        root: bool,
        outcome: Outcome,
    ) -> None:
        activation: Any = None
        for rule in self._compiled_rules(schema):
            if rule.uses_old_self and old is None:
                continue
            if rule.program is None:
                outcome.not_evaluated.append(
                    NotEvaluated(path, rule.text, rule.unavailable or "does not compile")
                )
                continue
            key = (id(rule), id(value), id(old) if rule.uses_old_self else 0)
            cached = self._results.get(key)
            if cached is None:
                if activation is None:
                    data = {"self": self._cel_value(value, schema, root)}
                    if old is not None:
                        data["oldSelf"] = self._cel_value(old, schema, root)
                    invalid = any(v is _INVALID for v in data.values())
                    partial = any(v is _PARTIAL for v in data.values())
                    activation = (
                        _INVALID
                        if invalid
                        else _PARTIAL
                        if partial
                        else environment(self.kube_version).Activation(data=data)
                    )
                if activation is _PARTIAL:
                    verdict, message = "partial", None
                else:
                    verdict, message = (
                        ("error", None) if activation is _INVALID else self._run(rule, activation)
                    )
                cached = (value, old, verdict, message)
                self._results[key] = cached
            _, _, verdict, message = cached
            where = path
            if rule.field_path:
                where = values.child(path, rule.field_path.lstrip("."))
            if verdict == "partial":
                outcome.not_evaluated.append(
                    NotEvaluated(
                        path,
                        rule.text,
                        "the value holds data CEL cannot read as the schema types it; the"
                        " apiserver fails the rule if it reads that data",
                    )
                )
            elif verdict == "error":
                outcome.violations.append(
                    Violation(where, "rule-error", f"error evaluating rule: {rule.text.strip()}")
                )
            elif verdict == "fail" and (rule.uses_old_self or not ratchet.applies()):
                outcome.violations.append(
                    Violation(where, "rule", rule.message, rule.reason, message)
                )

    def _run(self, rule: Rule, activation: Any) -> tuple[str, str | None]:
        result = rule.program.eval(activation)
        if result.type() == cel.Type.ERROR:
            return "error", None
        if result.value() is True:
            return "pass", None
        return "fail", self._message(rule, activation)

    def _message(self, rule: Rule, activation: Any) -> str | None:
        if rule.message_program is None:
            return None
        result = rule.message_program.eval(activation)
        if result.type() == cel.Type.ERROR:
            return None
        text = result.value()
        return text.strip() if isinstance(text, str) and text.strip() else None
