"""Every disagreement the differential suite found, replayed on the validator alone with
the answer kube-apiserver v1.35.4 gave (tests/validation_rows.py)."""

from __future__ import annotations

import pytest

from upgrade_guard.validation import judge
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
