"""What the apiserver would do with a stored object under a candidate CRD version schema.

For an object stored before the CRD update, :meth:`Judge.judge` predicts:

* the read-back (GET): pruning, dropped nulls, defaults, as RFC 6902 operations;
* a CREATE of a copy (restore from backup, move to another cluster): never ratcheted;
* an UPDATE that changes only metadata (a label): ratcheted from 1.30, so only
  constraints on nodes that change (the root) and rules using ``oldSelf`` bite;
* a ``/status`` write: OpenAPI validation of ``status`` only, CEL over the whole object.

:meth:`Judge.update` answers any UPDATE (e.g. one that edits a field whose schema
changed). The order and the gates follow apiextensions-apiserver
``pkg/registry/customresource/strategy.go`` and ``status_strategy.go``: structural
errors of a blocking kind (type, enum, required, too long, too many) keep CEL rules from
running; list set/map uniqueness is checked on UPDATE only if the old object met it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from . import cel_rules, embedded, listtypes, readback, values
from .correlation import Correlation
from .openapi import OpenAPIValidator
from .violations import NotEvaluated, Violation

_BLOCKING = frozenset({"type", "enum", "required", "maxLength", "maxItems", "maxProperties"})
_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
TOUCH_LABEL = "upgrade-guard.io/touched"


@dataclass(frozen=True)
class Attempt:
    """The apiserver's answer to one write, predicted."""

    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    rules_skipped: bool = False  # blocking errors kept CEL rules from running

    @property
    def refused(self) -> bool:
        return bool(self.violations)


@dataclass(frozen=True)
class Judgement:
    read_changes: tuple[tuple[str, str], ...]
    create: Attempt
    update: Attempt
    status: Attempt

    @property
    def harmed(self) -> bool:
        """Hurt on read or on the writes a controller makes anyway."""
        return bool(self.read_changes) or self.update.refused or self.status.refused


class Judge:
    """One CRD version's root schema (``openAPIV3Schema``) for one Kubernetes version."""

    def __init__(self, schema: values.Schema, kube_version: tuple[int, int]) -> None:
        self.schema = schema
        self.kube_version = kube_version
        self.ratcheting = kube_version >= (1, 30)
        self.openapi = OpenAPIValidator(kube_version)
        self.rules = cel_rules.RuleEvaluator(schema, kube_version)

    def read(self, stored: dict[str, Any]) -> dict[str, Any]:
        return readback.coerce(stored, self.schema)

    def judge(self, stored: dict[str, Any]) -> Judgement:
        read = self.read(stored)
        touched = copy.deepcopy(read)
        touched.setdefault("metadata", {}).setdefault("labels", {})[TOUCH_LABEL] = "true"
        return Judgement(
            read_changes=tuple(readback.changes(stored, read)),
            create=self.create(_fresh_copy(read)),
            update=self.update(touched, read),
            status=self.status_update(read, read),
        )

    def create(self, body: dict[str, Any]) -> Attempt:
        obj = self.read(body)
        found = self.openapi.validate(obj, self.schema, "")
        found += embedded.violations(obj, self.schema)
        found += listtypes.violations(obj, self.schema)
        return self._with_rules(found, obj, None)

    def update(self, body: dict[str, Any], old: dict[str, Any]) -> Attempt:
        obj = self.read(body)
        correlation = Correlation(obj, old, self.schema) if self.ratcheting else None
        found = self.openapi.validate(obj, self.schema, "", correlation)
        found += embedded.violations(obj, self.schema)
        if not listtypes.violations(old, self.schema):
            found += listtypes.violations(obj, self.schema)
        return self._with_rules(found, obj, old)

    def status_update(self, body: dict[str, Any], old: dict[str, Any]) -> Attempt:
        written = self.read(body)
        obj = copy.deepcopy(old)
        if "status" in written:
            obj["status"] = written["status"]
        else:
            obj.pop("status", None)
        found: list[Violation] = []
        status_schema = values.property_schema(self.schema, "status")
        if "status" in obj and status_schema is not None:
            correlation = None
            if self.ratcheting:
                correlation = Correlation(obj, old, self.schema).key("status")
            found += self.openapi.validate(obj["status"], status_schema, "status", correlation)
        new_list_errors = listtypes.violations(obj, self.schema)
        if new_list_errors and not listtypes.violations(old, self.schema):
            found += new_list_errors
        return self._with_rules(found, obj, old)

    def _with_rules(self, found: list[Violation], obj: dict[str, Any], old: Any) -> Attempt:
        if any(v.check in _BLOCKING or v.detail == "Required value" for v in found):
            return Attempt(tuple(sorted(found)), (), rules_skipped=True)
        outcome = self.rules.evaluate(obj, old)
        return Attempt(
            tuple(sorted(found + outcome.violations)), tuple(sorted(outcome.not_evaluated))
        )


def _fresh_copy(obj: dict[str, Any]) -> dict[str, Any]:
    fresh = copy.deepcopy(obj)
    meta = fresh.get("metadata")
    if isinstance(meta, dict):
        for key in _SERVER_METADATA:
            meta.pop(key, None)
    return fresh
