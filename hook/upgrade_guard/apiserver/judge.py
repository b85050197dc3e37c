"""What the apiserver would do with a stored object under a candidate CRD version schema.

For an object stored before the CRD update, :meth:`Judge.judge` predicts:

* the read-back (GET): pruning, dropped nulls, defaults, as RFC 6902 operations;
* a CREATE of a copy (restore from backup, move to another cluster): never ratcheted;
* an UPDATE that changes only metadata (a label): ratcheted from 1.30, so only
  constraints on nodes that change (the root) and rules using ``oldSelf`` bite;
* a ``/status`` write: OpenAPI validation of ``status`` only, CEL over the whole object;
  ratcheted as an UPDATE from 1.33, not at all before (kubernetes#129506).

:meth:`Judge.update` answers any UPDATE (e.g. one that edits a field whose schema
changed). The order and the gates follow apiextensions-apiserver
``pkg/registry/customresource/strategy.go`` and ``status_strategy.go``: structural
errors of a blocking kind (type, enum, required, too long, too many) keep CEL rules from
running; list set/map uniqueness is checked on UPDATE only if the old object met it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import embedded, listtypes, minors, readback, values
from .correlation import Correlation
from .openapi import OpenAPIValidator
from .violations import NotEvaluated, Violation

if TYPE_CHECKING:
    from .cel_rules import RuleEvaluator

_BLOCKING = frozenset({"type", "enum", "required", "maxLength", "maxItems", "maxProperties"})
_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
TOUCH_LABEL = "upgrade-guard.io/touched"


@dataclass(frozen=True)
class Attempt:
    """The apiserver's answer to one write, predicted."""

    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()

    @property
    def refused(self) -> bool:
        return bool(self.violations)


@dataclass(frozen=True)
class Judgement:
    read_changes: tuple[tuple[str, str], ...]  # (op, path) of the read-back patch
    create: Attempt
    update: Attempt
    status: Attempt


class Judge:
    """One CRD version's root schema (``openAPIV3Schema``) for one Kubernetes version."""

    def __init__(self, schema: values.Schema, kube_version: tuple[int, int]) -> None:
        self.schema = schema
        self.kube_version = kube_version
        self.ratcheting = kube_version >= (1, 30)
        self.status_ratcheting = kube_version >= minors.STATUS_RATCHETED
        self.openapi = OpenAPIValidator(kube_version)
        self.rules = _rule_evaluator(schema, kube_version)
        self._lists: listtypes.Memo = {}
        self._embedded: embedded.Memo = {}

    def _forget(self) -> None:
        """Drop what one judgement remembered of the objects it saw."""
        if self.rules is not None:
            self.rules.forget()
        self._lists.clear()
        self._embedded.clear()

    def read(self, stored: dict[str, Any]) -> dict[str, Any]:
        """What a GET returns for ``stored`` (read-only: it shares parts with it)."""
        return readback.coerce(stored, self.schema)[0]

    def judge(self, stored: dict[str, Any]) -> Judgement:
        read, patch = readback.coerce(stored, self.schema)
        touched = {**read, "metadata": _with_label(read.get("metadata"))}
        self._forget()
        try:
            return Judgement(
                read_changes=tuple(readback.operations(patch)),
                create=self._create(fresh_copy(read)),
                update=self._update(touched, read),
                status=self._status_update(read, read),
            )
        finally:
            self._forget()

    def create(self, body: dict[str, Any]) -> Attempt:
        return self.create_decoded(self.read(body))

    def create_decoded(self, decoded: dict[str, Any]) -> Attempt:
        """A CREATE of a body as the apiserver decodes it (:meth:`read` of the body)."""
        self._forget()
        return self._create(decoded)

    def update(self, body: dict[str, Any], old: dict[str, Any]) -> Attempt:
        """An UPDATE with ``body`` of ``old`` (as the apiserver reads it back)."""
        self._forget()
        return self._update(self.read(body), old)

    def status(self, body: dict[str, Any], old: dict[str, Any]) -> Attempt:
        """A ``/status`` write of ``body`` onto ``old`` (as the apiserver reads it back)."""
        self._forget()
        return self._status_update(self.status_written(body, old), old)

    def status_written(self, body: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        """What a ``/status`` write of ``body`` onto ``old`` stores: ``old`` with the
        status of ``body`` as decoded (status_strategy.go PrepareForUpdate keeps the rest).
        Read-only: it shares parts with both."""
        written = {key: value for key, value in old.items() if key != "status"}
        decoded = self.read(body)
        if "status" in decoded:
            written["status"] = decoded["status"]
        return written

    def _create(self, obj: dict[str, Any]) -> Attempt:
        found = self.openapi.validate(obj, self.schema, "")
        found += embedded.violations(obj, self.schema, memo=self._embedded)
        found += listtypes.violations(obj, self.schema, memo=self._lists)
        return self._with_rules(found, obj, None, None)

    def _update(self, obj: dict[str, Any], old: dict[str, Any]) -> Attempt:
        correlation = Correlation(obj, old, self.schema) if self.ratcheting else None
        found = self.openapi.validate(obj, self.schema, "", correlation)
        found += embedded.violations(obj, self.schema, memo=self._embedded)
        if not listtypes.violations(old, self.schema, memo=self._lists):
            found += listtypes.violations(obj, self.schema, memo=self._lists)
        return self._with_rules(found, obj, old, correlation)

    def _status_update(self, obj: dict[str, Any], old: dict[str, Any]) -> Attempt:
        """``obj``: ``old`` with the written status (the status strategy keeps the rest)."""
        found: list[Violation] = []
        correlation = Correlation(obj, old, self.schema) if self.status_ratcheting else None
        status_schema = values.property_schema(self.schema, "status")
        if "status" in obj and status_schema is not None:
            status_correlation = correlation.key("status") if correlation else None
            found += self.openapi.validate(
                obj["status"], status_schema, "status", status_correlation
            )
        new_list_errors = listtypes.violations(obj, self.schema, memo=self._lists)
        if new_list_errors and not listtypes.violations(old, self.schema, memo=self._lists):
            found += new_list_errors
        return self._with_rules(found, obj, old, correlation, self.status_ratcheting)

    def _with_rules(
        self,
        found: list[Violation],
        obj: dict[str, Any],
        old: Any,
        correlation: Correlation | None,
        ratcheting: bool = True,
    ) -> Attempt:
        unchecked = list(self.openapi.unchecked)
        self.openapi.unchecked.clear()
        if self.rules is None or any(
            v.check in _BLOCKING or v.detail == "Required value" for v in found
        ):
            return Attempt(tuple(sorted(found)), tuple(sorted(unchecked)))  # CEL rules not run
        outcome = self.rules.evaluate(obj, old, correlation, ratcheting)
        return Attempt(
            tuple(sorted(found + outcome.violations)),
            tuple(sorted(unchecked + outcome.not_evaluated)),
        )


def _rule_evaluator(schema: values.Schema, kube_version: tuple[int, int]) -> RuleEvaluator | None:
    """The evaluator of the schema's CEL rules; None where it holds none, and then the CEL
    runtime (a C++ extension, about 0.02 s to load) is not imported."""
    if not values.uses(schema, "x-kubernetes-validations"):
        return None
    from .cel_rules import RuleEvaluator

    return RuleEvaluator(schema, kube_version)


def _with_label(meta: Any) -> dict[str, Any]:
    labelled: dict[str, Any] = dict(meta) if isinstance(meta, dict) else {}
    labelled["labels"] = {**(labelled.get("labels") or {}), TOUCH_LABEL: "true"}
    return labelled


def fresh_copy(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without the metadata the server sets: the body of a CREATE of a copy."""
    fresh = dict(obj)
    meta = fresh.get("metadata")
    if isinstance(meta, dict):
        fresh["metadata"] = {k: v for k, v in meta.items() if k not in _SERVER_METADATA}
    return fresh
