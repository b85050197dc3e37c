"""Every rule, registered once, ordered by code."""

from __future__ import annotations

from upgrade_guard.rules import (
    bound_tightened,
    combinator_changed,
    conversion_strategy_changed,
    crd_removed,
    declared_break_unused,
    default_added,
    default_changed,
    embedded_resource_changed,
    enum_restricted,
    format_changed,
    identity_changed,
    int_or_string_removed,
    list_type_changed,
    map_type_changed,
    multiple_of_changed,
    nullable_removed,
    pattern_changed,
    preserve_unknown_fields_removed,
    property_removed,
    required_added,
    required_added_with_default,
    scale_subresource_changed,
    scope_changed,
    selectable_field_removed,
    served_version_removed,
    served_versions_incompatible,
    short_names_removed,
    status_subresource_removed,
    storage_version_changed,
    stored_version_removed,
    type_changed,
    unclassified_change,
    validation_rule_added,
)
from upgrade_guard.rules.base import Rule

ALL_RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            crd_removed.RULE,
            identity_changed.RULE,
            scope_changed.RULE,
            stored_version_removed.RULE,
            served_version_removed.RULE,
            storage_version_changed.RULE,
            short_names_removed.RULE,
            conversion_strategy_changed.RULE,
            status_subresource_removed.RULE,
            served_versions_incompatible.RULE,
            selectable_field_removed.RULE,
            scale_subresource_changed.RULE,
            property_removed.RULE,
            required_added.RULE,
            required_added_with_default.RULE,
            type_changed.RULE,
            nullable_removed.RULE,
            int_or_string_removed.RULE,
            enum_restricted.RULE,
            bound_tightened.RULE,
            multiple_of_changed.RULE,
            format_changed.RULE,
            pattern_changed.RULE,
            default_added.RULE,
            default_changed.RULE,
            validation_rule_added.RULE,
            list_type_changed.RULE,
            map_type_changed.RULE,
            preserve_unknown_fields_removed.RULE,
            embedded_resource_changed.RULE,
            combinator_changed.RULE,
            unclassified_change.RULE,
            declared_break_unused.RULE,
        ),
        key=lambda rule: rule.code,
    )
)
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, Rule] = {rule.name: rule for rule in ALL_RULES}


def lookup(code_or_name: str) -> Rule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())
