"""Disagreements the differential suite found between the validator and kube-apiserver
v1.35.4, kept as fixed rows: each is replayed against the real apiserver by
tests/cluster/test_validation_truth.py and against the validator alone, with the
apiserver's recorded answer, by tests/validation/test_regressions.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schema_strategies import Case


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


REGRESSIONS: tuple[Regression, ...] = ()
