"""Every rule and check, registered once, ordered by code: what `rules` lists, `explain`
documents and the policy's `rules:` overrides. Each module of this package but ``kinds``
defines one ``RULE``; the registry is what they define, found by listing the package."""

from __future__ import annotations

import importlib
import os
from typing import TypeVar

from upgrade_guard.rules.kinds import Rule

Kind = TypeVar("Kind", bound=Rule)
_NOT_RULES = frozenset({"__init__", "kinds"})


def _defined() -> list[Rule]:
    """The RULE of each module of this package (listed with os: pkgutil would be an import
    more at start-up)."""
    found: list[Rule] = []
    for entry in sorted(os.listdir(__path__[0])):
        module, suffix = os.path.splitext(entry)
        if suffix == ".py" and module.isidentifier() and module not in _NOT_RULES:
            found.append(importlib.import_module(f"{__name__}.{module}").RULE)
    return found


ALL_RULES: tuple[Rule, ...] = tuple(sorted(_defined(), key=lambda rule: rule.code))
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, Rule] = {rule.name: rule for rule in ALL_RULES}


def of_kind(kind: type[Kind]) -> tuple[Kind, ...]:
    """The registered rules of one kind, in code order."""
    return tuple(rule for rule in ALL_RULES if isinstance(rule, kind))


def lookup(code_or_name: str) -> Rule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())
