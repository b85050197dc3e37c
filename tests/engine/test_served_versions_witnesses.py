"""UG110 witnesses written once the new CRD is applied (``stored_under`` "new"): where no
object stored while the old CRD is live meets two served versions' disagreement, one
written at the first version after the upgrade does. Each row: a disagreement witnessed
beside the nearest new CRD that has none (no UG110 error). Held to the real apiserver by
tests/cluster/test_replay.py and tools/replay.py --rule UG110."""

from __future__ import annotations

from typing import Any

import pytest

from crd_builders import compare, crd, spec_schema, version
from upgrade_guard.apiserver import minors, witness
from upgrade_guard.findings import Finding, Witness

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}


def _ug110(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Finding]:
    return {
        f.version: f
        for f in compare(old, new).findings
        if f.code == "UG110" and str(f.severity) == "error"
    }


V2_ONLY = crd(version("v2", spec_schema(x=S)))
V1_STORED = crd(version("v1", spec_schema(x=S)), version("v2", spec_schema(x=S), storage=False))
ROWS = [
    # old, new with a witness, nearest new without an error, pair, operation, stored_under
    pytest.param(
        V2_ONLY,
        crd(version("v1", spec_schema(x=INT), storage=False), version("v2", spec_schema(x=S))),
        crd(version("v1", spec_schema(x=S), storage=False), version("v2", spec_schema(x=S))),
        "v1->v2", "create", "new", id="a version the old CRD did not serve",
    ),
    pytest.param(
        V1_STORED,
        crd(version("v1", spec_schema(x=S, y=S)), version("v2", spec_schema(x=S), storage=False)),
        crd(version("v1", spec_schema(x=S, y=S)),
            version("v2", spec_schema(x=S, y=S), storage=False)),
        "v1->v2", "read", "new", id="a field the old CRD's version lacked, pruned at the other",
    ),
    pytest.param(
        V1_STORED,
        crd(version("v1", spec_schema(x={**S, "enum": ["a", "b"]})),
            version("v2", spec_schema(x={**S, "enum": ["a"]}), storage=False)),
        crd(version("v1", spec_schema(x={**S, "enum": ["a", "b"]})),
            version("v2", spec_schema(x={**S, "enum": ["a", "b"]}), storage=False)),
        "v1->v2", "create", None, id="stored under the old CRD where that shows it",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "nearest", "pair", "operation", "stored_under"), ROWS)
def test_a_disagreement_witnessed_beside_the_nearest_without_one(
    old: dict[str, Any],
    new: dict[str, Any],
    nearest: dict[str, Any],
    pair: str,
    operation: str,
    stored_under: str | None,
) -> None:
    found = _ug110(old, new)[pair]
    assert found.proven is True and found.witness is not None, found
    first, second = pair.split("->")
    made = found.witness
    assert (made.version, made.read_version, made.operation) == (first, second, operation)
    assert made.stored_under == stored_under
    assert made.stored["apiVersion"] == f"example.com/{first}"
    assert pair not in _ug110(old, nearest)


def test_a_get_at_the_other_version_fills_none_of_its_defaults() -> None:
    """What the replay found: a GET at v2 of an object kept as v1 prunes by v2's schema but
    defaults by v1's (the version it is kept as in etcd) alone."""
    z = {**S, "default": "d"}
    new = crd(
        version("v1", spec_schema(x=S, y=S)), version("v2", spec_schema(x=S, z=z), storage=False)
    )
    made = _ug110(V1_STORED, new)["v1->v2"].witness
    assert made is not None and made.operation == "read" and made.read_back is not None
    assert made.message == "remove /spec/y"
    assert "z" not in made.read_back["spec"] and "y" in made.stored["spec"]


def test_the_old_crd_doing_the_same_leaves_no_witness_of_the_upgrade() -> None:
    """``shown_by``: an integer written at v1 and copied at v2, which holds a string, is
    refused by the old CRD's versions as well where they disagree alike."""
    made = Witness(
        "v1", "create", {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "witness"},
                         "spec": {"x": 0}},
        "refuses", "spec.x: Invalid value", read_version="v2",
    )  # fmt: skip
    integer, string = spec_schema(x=INT), spec_schema(x=S)
    assert witness.shown_by(made, integer, string, minors.NEWEST)
    assert not witness.shown_by(made, string, string, minors.NEWEST)
    assert not witness.shown_by(made, integer, integer, minors.NEWEST)
