"""The rule table: one module a rule, registered once, documented, and tested."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

from upgrade_guard import rules
from upgrade_guard.rules.kinds import Rule

TESTS = Path(__file__).resolve().parents[1]
HEADINGS = ("What it flags:", "Why it matters:", "Allowed:")


def _rule_modules(package: ModuleType) -> list[ModuleType]:
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
        if m.name != "kinds"
    ]


def test_every_rule_module_defines_one_rule_and_the_registry_is_theirs() -> None:
    """The registry lists the package itself; here pkgutil lists it again."""
    modules = _rule_modules(rules)
    for module in modules:
        defined = [value for value in vars(module).values() if isinstance(value, Rule)]
        assert defined == [module.RULE], f"{module.__name__}: {len(defined)} rules"
        assert module.__name__.endswith("." + module.RULE.name.replace("-", "_"))
    assert sorted((m.RULE for m in modules), key=lambda r: r.code) == list(rules.ALL_RULES)
    assert len(rules.BY_CODE) == len(rules.BY_NAME) == len(rules.ALL_RULES) == len(modules)


@pytest.mark.parametrize("rule", rules.ALL_RULES, ids=lambda rule: rule.code)
def test_rule_is_documented_and_named_consistently(rule: rules.Rule) -> None:
    assert re.fullmatch(r"UG\d{3}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name)
    assert rule.doc.startswith(f"{rule.code} {rule.name}\n")
    for heading in HEADINGS:
        assert heading in rule.doc, f"{rule.code} docstring lacks {heading!r}"
    assert rule.summary.endswith(".") and "\n" not in rule.summary


def test_a_rule_crosses_a_process_boundary_as_itself() -> None:
    """A diff shared by two processes sends its changes, rules and all, through pickle."""
    assert all(pickle.loads(pickle.dumps(rule)) is rule for rule in rules.ALL_RULES)


@pytest.mark.parametrize("rule", rules.ALL_RULES, ids=lambda rule: rule.code)
def test_every_rule_appears_in_a_test_table(rule: rules.Rule) -> None:
    sources = "".join(
        p.read_text() for p in TESTS.rglob("test_*.py") if p.name != "test_registry.py"
    )
    assert f'"{rule.code}"' in sources, f"no test names {rule.code}"
