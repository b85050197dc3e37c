"""The CEL cost estimator (validation/cel_cost.py) against the costs kube-apiserver v1.35.4
estimates (tests/cel_cost_rows.py, each held to the apiserver by
tests/cluster/test_cel_cost_truth.py), and the budgets a schema is refused by."""

from __future__ import annotations

from typing import Any

import pytest

from cel_cost_rows import COST_ON_OLDEST, NODE, ROWS
from upgrade_guard.apiserver import cel_compile, cel_cost, cel_reads, cel_types


def _budget_problems(root: dict[str, Any]) -> list[cel_cost.OverBudget]:
    sites = cel_reads.sites(root)
    return cel_cost.budget_problems(
        sites, cel_compile.estimates(cel_compile.verdicts(sites, (1, 35)))
    )


@pytest.mark.parametrize(("rule", "cost"), ROWS, ids=[rule for rule, _ in ROWS])
def test_estimate_is_the_apiservers(rule: str, cost: int) -> None:
    decl = cel_types.declare(NODE)
    assert decl is not None
    assert cel_cost.estimate(rule, decl) == cost


OLDEST_ROWS = [row for row in ROWS if COST_ON_OLDEST.get(row[0], 0) is not None]


@pytest.mark.parametrize(("rule", "cost"), OLDEST_ROWS, ids=[rule for rule, _ in OLDEST_ROWS])
def test_estimate_is_the_oldest_minors(rule: str, cost: int) -> None:
    """As kube-apiserver v1.32.13 estimates (cel-go v0.22): ROWS it costs otherwise, at its
    cost (test_cel_cost_truth holds both to it); those it does not compile left out."""
    decl = cel_types.declare(NODE)
    assert decl is not None
    found = cel_cost.estimate(rule, decl, minor=(1, 32))
    expected = COST_ON_OLDEST.get(rule, cost)
    if isinstance(expected, str):  # over every budget
        assert found is not None and found > cel_cost.PER_EXPRESSION_LIMIT * 100
    else:
        assert found == expected


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("self.name", "a rule must be a bool: the apiserver refuses it uncosted"),
        ("self.nosuch == 1", "an undefined field does not compile"),
        ("self.items.sortBy(x, x) == []", "a macro not expanded here"),
        ("self.name.size(", "no parse"),
    ],
)
def test_not_estimated(rule: str, why: str) -> None:
    decl = cel_types.declare(NODE)
    assert decl is not None
    assert cel_cost.estimate(rule, decl) is None, why


def _names(items: dict[str, Any], rule: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"names": {"type": "array", "items": items, "maxItems": 100}},
        "x-kubernetes-validations": [{"rule": rule}],
    }


ALL_SHORT = "self.names.all(n, n.matches('^[a-z]+$'))"


BUDGET_ROWS = [
    ("bounded", {"type": "string", "maxLength": 1000}, None),
    ("maxLength removed", {"type": "string"}, "6.3x"),
    ("just under", {"type": "string", "maxLength": 124_992}, None),
    ("just over", {"type": "string", "maxLength": 124_993}, "1.000000x"),
]


@pytest.mark.parametrize(
    ("items", "factor"),
    [(items, factor) for _, items, factor in BUDGET_ROWS],
    ids=[key for key, _, _ in BUDGET_ROWS],
)
def test_rule_budget(items: dict[str, Any], factor: str | None) -> None:
    """A rule over 100 strings just within and just over its budget, and over it once the
    strings' maxLength is removed (the same numbers as the apiserver's, held to it by
    tests/cluster/test_cel_cost_truth.py)."""
    root = {"type": "object", "properties": {"spec": _names(items, ALL_SHORT)}}
    problems = _budget_problems(root)
    if factor is None:
        assert problems == []
        return
    (problem,) = problems
    assert problem.parts == ("spec",)
    assert problem.field == "x-kubernetes-validations[0].rule"
    assert problem.expression == ALL_SHORT
    assert problem.message.startswith(
        f"estimated rule cost exceeds budget by factor of {factor} (try simplifying the rule"
    )


def test_cardinality_multiplies_the_rule_cost() -> None:
    """A rule under a list of objects counts once per item: 63 x 158,730 is within the
    budget, 63 x 158,731 is not (10,000,000 / 63 = 158,730.2)."""

    def root(max_items: int) -> dict[str, Any]:
        item = {**NODE, "x-kubernetes-validations": [{"rule": ROWS[1][0]}]}
        return {
            "type": "object",
            "properties": {"l": {"type": "array", "maxItems": max_items, "items": item}},
        }

    assert _budget_problems(root(158_730)) == []
    (problem,) = _budget_problems(root(158_731))
    assert problem.parts == ("l", "[]")
    assert problem.message.startswith("estimated rule cost exceeds budget by factor of 1.000005x")


def test_the_schemas_total() -> None:
    """Eleven rules each within its budget, 110,000,000 together: the total is refused,
    naming the four costliest."""
    rule = "self.n == 1"  # cost 2
    properties = {
        f"l{i}": {
            "type": "array",
            "maxItems": 5_000_000,
            "items": {**NODE, "x-kubernetes-validations": [{"rule": rule}]},
        }
        for i in range(11)
    }
    root = {"type": "object", "properties": properties}
    (problem,) = _budget_problems(root)
    assert problem.field == ""
    assert problem.message.startswith(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        " exceeds budget by factor of 1.100000x"
    )
    assert len(problem.contributors) == 4


@pytest.mark.parametrize(
    ("cost", "shown"),
    [(10_000_001, "1.000000x"), (14_999_999, "1.500000x"), (15_000_001, "1.5x"),
     (1_000_000_000, "100.0x"), (1_000_000_001, "more than 100x")],
)  # fmt: skip
def test_budget_message_factor(cost: int, shown: str) -> None:
    assert f"by factor of {shown} " in cel_cost.budget_message("x", cost, 10_000_000)
