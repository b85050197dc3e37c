"""Disagreements the differential suite found between the validator and kube-apiserver
v1.35.4, kept as fixed rows: each is replayed against the real apiserver by
tests/cluster/test_validation_truth.py and against the validator alone, with the
apiserver's recorded answer, by tests/validation/test_regressions.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schema_strategies import Case


def root_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """The root schema every differential case's CRD has around its ``spec`` schema."""
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": {"type": "object", "properties": {"note": {"type": "string"}}},
        },
    }


@dataclass(frozen=True)
class Regression:
    key: str
    old: dict[str, Any]  # spec schemas
    new: dict[str, Any]
    stored: dict[str, Any]  # spec of the object stored under old
    op: str  # "GET", "CREATE copy", "UPDATE label", "UPDATE /status", "CREATE under old"
    refused: bool  # the apiserver's answer (for GET: whether the read-back changed)
    why: str  # what the validator got wrong, and the fix

    def case(self) -> Case:
        return Case(self.old, self.new, [], [self.stored], [self.stored])


_NULLABLE = {"type": "object", "properties": {"beta": {"type": "string", "nullable": True}}}
_NULLABLE_ENUM = {
    "type": "object",
    "properties": {"beta": {"type": "string", "nullable": True, "enum": ["ab", "green"]}},
}

_PORT = {
    "type": "object",
    "properties": {
        "port": {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "0 < self && self <= 65535"}],
        }
    },
}

REGRESSIONS: tuple[Regression, ...] = (
    Regression(
        "integral-float-in-integer-read-by-a-rule",
        old=_PORT,
        new=_PORT,
        stored={"port": 4.0},
        op="CREATE under old",
        refused=True,
        why="4.0 passes OpenAPI's integer check, but a rule reading it fails ('invalid data,"
        " expected int, got float64'; seed 20261130, an istio port rule): the validator"
        " converted it to 4",
    ),
    Regression(
        "integer-read-by-a-rule",
        old=_PORT,
        new=_PORT,
        stored={"port": 4},
        op="CREATE under old",
        refused=False,
        why="the allowed side of the row above",
    ),
    Regression(
        "null-in-nullable",
        old=_NULLABLE,
        new=_NULLABLE,
        stored={"beta": None},
        op="CREATE under old",
        refused=False,
        why="the allowed side of the rows below: a null where nullable holds and no enum",
    ),
    Regression(
        "null-in-nullable-enum",
        old=_NULLABLE_ENUM,
        new=_NULLABLE_ENUM,
        stored={"beta": None},
        op="CREATE under old",
        refused=True,
        why="nullable lets null pass the type check, not the enum: the apiserver refuses"
        " null (seed 7); the validator skipped every check on null",
    ),
    Regression(
        "null-in-nullable-enum-listed",
        old={
            "type": "object",
            "properties": {"beta": {**_NULLABLE_ENUM["properties"]["beta"], "enum": ["ab", None]}},
        },
        new=_NULLABLE_ENUM,
        stored={"beta": None},
        op="CREATE under old",
        refused=True,
        why='null listed in the enum is refused all the same (\'supported values: "ab",'
        ' "null"\'; seed 11): the validator took the listed null as allowed',
    ),
)
