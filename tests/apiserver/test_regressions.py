"""Every disagreement the differential suite found, replayed on the validator alone with
the answer kube-apiserver v1.35.4 gave (tests/validation_rows.py)."""

from __future__ import annotations

import pytest

from upgrade_guard.apiserver import judge
from validation_rows import REGRESSIONS, Regression, root_schema

KUBE_VERSION = (1, 35)


def _object(spec: object) -> dict[str, object]:
    return {"apiVersion": "g.io/v1", "kind": "Thing", "metadata": {"name": "o0"}, "spec": spec}


@pytest.mark.parametrize("row", REGRESSIONS, ids=[r.key for r in REGRESSIONS])
def test_regression(row: Regression) -> None:
    if row.op == "CREATE under old":
        answer = judge.Judge(root_schema(row.old), KUBE_VERSION).create(_object(row.stored))
        assert answer.refused is row.refused, (row.why, answer)
        return
    stored = judge.Judge(root_schema(row.old), KUBE_VERSION).read(_object(row.stored))
    found = judge.Judge(root_schema(row.new), KUBE_VERSION).judge(stored)
    answer = {
        "GET": bool(found.read_changes),
        "CREATE copy": found.create.refused,
        "UPDATE label": found.update.refused,
        "UPDATE /status": found.status.refused,
    }[row.op]
    assert answer is row.refused, (row.why, found)


def test_a_rule_over_data_of_another_type_is_never_passed() -> None:
    """Seed 20261130 under load: map values typed number, then boolean with `self == oldSelf`
    on the map. kube-apiserver v1.35.4 refuses a /status write ('invalid data, expected bool,
    got float64 evaluating rule: self == oldSelf'); which rules read such data cannot be told
    here, so the validator reports the rule not evaluated rather than passed."""
    old = {"type": "object", "properties": {"items": {"type": "object",
           "additionalProperties": {"type": "number", "minimum": 0}}}}  # fmt: skip
    new = {"type": "object", "properties": {"items": {
        "type": "object", "additionalProperties": {"type": "boolean"}, "maxProperties": 4,
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}  # fmt: skip
    stored = judge.Judge(root_schema(old), KUBE_VERSION).read(
        _object({"items": {"k1": 0.5, "k2": 2, "k3": 2.5}})
    )
    status = judge.Judge(root_schema(new), KUBE_VERSION).judge(stored).status
    assert status.refused or status.not_evaluated, status
