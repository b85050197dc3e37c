"""Every lifecycle rule, registered once, ordered by code."""

from __future__ import annotations

from upgrade_guard.lifecycle.rules import (
    break_within_version,
    declaration_unused,
    deprecation_window_short,
    removed_while_served,
    removed_without_migration,
    replaced_by_less_stable,
    storage_before_served,
    unserved_without_deprecation,
)
from upgrade_guard.lifecycle.rules.base import LifecycleRule

ALL_RULES: tuple[LifecycleRule, ...] = tuple(
    sorted(
        (
            break_within_version.RULE,
            unserved_without_deprecation.RULE,
            deprecation_window_short.RULE,
            replaced_by_less_stable.RULE,
            storage_before_served.RULE,
            removed_while_served.RULE,
            removed_without_migration.RULE,
            declaration_unused.RULE,
        ),
        key=lambda rule: rule.code,
    )
)
BY_CODE: dict[str, LifecycleRule] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, LifecycleRule] = {rule.name: rule for rule in ALL_RULES}


def lookup(code_or_name: str) -> LifecycleRule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())
