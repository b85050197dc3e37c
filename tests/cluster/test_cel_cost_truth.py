"""CEL cost budgets held to the real kube-apiserver: ``upgrade-guard diff`` exits 2 exactly
when the apiserver refuses a CRD (server-side dry-run CREATE) for a rule's estimated cost,
in the apiserver's words.

Exact costs: each rule of tests/cel_cost_rows.py goes into a CRD whose other rules (``has()``,
cost 1, under lists of a chosen ``maxItems``) bring the schema's total to exactly the
per-CRD budget with the row's cost, which the apiserver accepts, and to one more, which it
refuses: so its cost is the row's, to the unit. Then paired budget rows: a rule just within
its budget beside one just over, a ``maxLength`` removed pushing it over, a list's
``maxItems`` multiplying it, and the schema's total. Every row runs on the newest and the
oldest minor's apiserver (issue 38), ``diff`` told the oldest with ``--kube-version``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_crd_validation_truth import (
    ModelDisagrees,
    _minimal_crd,
    apiserver_refusal,
)
from typer.testing import CliRunner

from cel_cost_rows import COST_ON_OLDEST, NODE, ROWS
from testenv import MINORS, NEWEST_MINOR, Cluster
from upgrade_guard.apiserver import cel_cost, cel_types
from upgrade_guard.cli import app

TOTAL = cel_cost.PER_CRD_LIMIT


def _crd(root: dict[str, Any]) -> dict[str, Any]:
    body = _minimal_crd()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = root
    return body


def tool(
    tmp_path: Path,
    body: dict[str, Any],
    minor: str = NEWEST_MINOR,
    old: dict[str, Any] | None = None,
) -> tuple[int, str]:
    """``diff`` of body over ``old`` (body itself by default: every rule held already)."""
    path, old_path = tmp_path / "crd.json", tmp_path / "old.json"
    path.write_text(json.dumps(body))
    old_path.write_text(json.dumps(body if old is None else old))
    version = [] if minor == NEWEST_MINOR else ["--kube-version", minor]
    result = CliRunner().invoke(app, ["diff", str(old_path), str(path), *version])
    return result.exit_code, result.output


def by_minor(rows: list[Any], ids: list[str], on_oldest: dict[str, Any]) -> list[Any]:
    """Each row on each minor; on the oldest, ``on_oldest[id]`` replaces the row's last value
    (what that apiserver answers), and the model of that minor must follow."""
    params = []
    for minor in MINORS:
        for row, key in zip(rows, ids, strict=True):
            if minor == NEWEST_MINOR:
                params.append(pytest.param(minor, *row, id=key))
            elif key in on_oldest:
                params.append(
                    pytest.param(
                        minor,
                        *row[:-1],
                        on_oldest[key],
                        id=f"{key} @{minor}",
                    )
                )
            else:
                params.append(pytest.param(minor, *row, id=f"{key} @{minor}"))
    return params  # fmt: skip


def model(condition: bool, said: str) -> None:
    if not condition:
        raise ModelDisagrees(said)


def _fillers(total: int) -> dict[str, Any]:
    """Properties whose rules add exactly ``total`` to the schema's estimated cost."""
    properties = {}
    for index in range(0, total, cel_cost.PER_EXPRESSION_LIMIT):
        properties[f"filler{index // cel_cost.PER_EXPRESSION_LIMIT}"] = {
            "type": "array",
            "maxItems": min(cel_cost.PER_EXPRESSION_LIMIT, total - index),
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "has(self.n)"}],
            },
        }
    return properties


def _at_total(rule: str, others: int) -> dict[str, Any]:
    node = {**copy.deepcopy(NODE), "x-kubernetes-validations": [{"rule": rule}]}
    return _crd({"type": "object", "properties": {"spec": node, **_fillers(others)}})


@pytest.mark.parametrize(
    ("minor", "rule", "cost"), by_minor(ROWS, [rule for rule, _ in ROWS], COST_ON_OLDEST)
)
def test_estimated_cost_is_the_apiservers(
    cluster_at: Callable[[str], Cluster],
    tmp_path: Path,
    minor: str,
    rule: str,
    cost: int | str | None,
) -> None:
    cluster = cluster_at(minor)
    if isinstance(cost, str):  # refused for its cost alone, in these words
        alone = _at_total(rule, 0)
        refused = apiserver_refusal(cluster, alone)
        assert refused is not None and cost in refused, refused
        code, said = tool(tmp_path, alone, minor)
        model(code == 2 and cost in said, said)
        return
    if cost is None:
        alone = _at_total(rule, 0)
        refused = apiserver_refusal(cluster, alone)
        assert refused is not None and "compilation failed" in refused, refused
        # The rule is new (the apiserver was asked to create the CRD): a rule the replaced
        # CRD held compiles in the environment of stored expressions, which may know it.
        code, said = tool(tmp_path, alone, minor, old=_minimal_crd())
        model(code == 2, said)
        return
    at_limit, over = _at_total(rule, TOTAL - cost), _at_total(rule, TOTAL - cost + 1)
    assert apiserver_refusal(cluster, at_limit) is None
    refused = apiserver_refusal(cluster, over)
    assert refused is not None and "estimated rule cost total" in refused
    model(tool(tmp_path, at_limit, minor)[0] == 0, "at the limit")
    code, said = tool(tmp_path, over, minor)
    model(code == 2, said)
    model("estimated rule cost total for entire OpenAPIv3 schema exceeds budget" in said, said)


ALL_LOWER = "self.names.all(n, n.matches('^[a-z]+$'))"


def _names(items: dict[str, Any], max_items: int | None = 100) -> dict[str, Any]:
    names: dict[str, Any] = {"type": "array", "items": items}
    if max_items is not None:
        names["maxItems"] = max_items
    spec = {
        "type": "object",
        "properties": {"names": names},
        "x-kubernetes-validations": [{"rule": ALL_LOWER}],
    }
    return _crd({"type": "object", "properties": {"spec": spec}})


def _listed(max_items: int) -> dict[str, Any]:
    """Row 2 of ROWS (cost 63) on the items of a list: counted once per item."""
    item = {**copy.deepcopy(NODE), "x-kubernetes-validations": [{"rule": ROWS[1][0]}]}
    list_node = {"type": "array", "maxItems": max_items, "items": item}
    return _crd({"type": "object", "properties": {"spec": list_node}})


def _eleven(max_items: int) -> dict[str, Any]:
    """Eleven rules of cost 2 under lists: each within its budget, the total maybe not."""
    item = {**copy.deepcopy(NODE), "x-kubernetes-validations": [{"rule": "self.n == 1"}]}
    properties = {
        f"l{i}": {"type": "array", "maxItems": max_items, "items": item} for i in range(11)
    }
    return _crd({"type": "object", "properties": properties})


BUDGET_ROWS = [
    ("a rule within its budget", _names({"type": "string", "maxLength": 124_992}), None),
    ("one more character: just over", _names({"type": "string", "maxLength": 124_993}),
     "estimated rule cost exceeds budget by factor of 1.000000x"),
    ("bounded strings", _names({"type": "string", "maxLength": 1000}), None),
    ("maxLength removed", _names({"type": "string"}),
     "estimated rule cost exceeds budget by factor of 6.3x"),
    ("maxItems removed from the list the rule ranges over",
     _names({"type": "string", "maxLength": 1000}, max_items=None),
     "estimated rule cost exceeds budget by factor of 84.5x"),
    ("a rule on 158,730 list items (63 each)", _listed(158_730), None),
    ("on 158,731", _listed(158_731), "estimated rule cost exceeds budget by factor of 1.000005x"),
    ("eleven rules, 100,000,000 together", _eleven(4_545_454), None),
    ("eleven rules, 110,000,000 together", _eleven(5_000_000),
     "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds"
     " budget by factor of 1.100000x"),
]  # fmt: skip


# BUDGET_ROWS the oldest minor's apiserver answers otherwise: id -> its message (None: accepted).
BUDGET_ON_OLDEST: dict[str, str | None] = {}


@pytest.mark.parametrize(
    ("minor", "body", "message"),
    by_minor(
        [(body, message) for _, body, message in BUDGET_ROWS],
        [key for key, _, _ in BUDGET_ROWS],
        BUDGET_ON_OLDEST,
    ),
)
def test_budget_row(
    cluster_at: Callable[[str], Cluster],
    tmp_path: Path,
    minor: str,
    body: dict[str, Any],
    message: str | None,
) -> None:
    refused = apiserver_refusal(cluster_at(minor), body)
    code, said = tool(tmp_path, body, minor)
    if message is None:
        assert refused is None
        model(code == 0, said)
        return
    assert refused is not None and message in refused
    model(code == 2, said)
    model(message in said, said)


MESSAGE = "self.name + ' is not allowed'"  # cost 314,577


@pytest.mark.parametrize("minor", MINORS)
def test_a_message_expression_counts_once_toward_the_total(
    cluster_at: Callable[[str], Cluster], tmp_path: Path, minor: str
) -> None:
    """A messageExpression's cost joins the schema's total as it is, not times its node's
    cardinality (a rule's does): on the items of a list of 1,000 it adds 314,577."""
    decl = cel_types.declare(NODE)
    assert decl is not None
    cost = cel_cost.estimate(MESSAGE, decl, result=cel_cost.STRING)
    assert cost == 314_577

    def body(others: int) -> dict[str, Any]:
        rule = {"rule": "true", "messageExpression": MESSAGE}
        item = {**copy.deepcopy(NODE), "x-kubernetes-validations": [rule]}
        listed = {"type": "array", "maxItems": 1000, "items": item}
        return _crd({"type": "object", "properties": {"spec": listed, **_fillers(others)}})

    cluster = cluster_at(minor)
    at_limit, over = body(TOTAL - cost), body(TOTAL - cost + 1)
    assert apiserver_refusal(cluster, at_limit) is None
    refused = apiserver_refusal(cluster, over)
    assert refused is not None and "estimated rule cost total" in refused
    assert tool(tmp_path, at_limit, minor)[0] == 0
    assert tool(tmp_path, over, minor)[0] == 2
