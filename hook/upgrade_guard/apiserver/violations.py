"""What a validation found, as plain data: where, which check, a message without values."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Violation:
    """One refusal the apiserver would give.

    ``path`` is the apiserver's field path of the value (``spec.ports[0].name``,
    ``spec.labels[app]``); ``check`` names what refused it (``type``, ``required``,
    ``enum``, ``maximum``, ``pattern``, ``format``, ``duplicate``, ``embedded``, ``rule``,
    ``rule-error``, ...); ``detail`` says why in words from the schema, never the value.
    ``message`` is a rule's ``messageExpression`` result: it may quote the object, so a
    report must not print it.
    """

    path: str
    check: str
    detail: str
    reason: str | None = None
    message: str | None = None


@dataclass(frozen=True, order=True)
class NotEvaluated:
    """A CEL rule that could not be evaluated here (a function this validator lacks, or
    one the cluster's version does not have): never counted as passed."""

    path: str
    rule: str
    why: str
