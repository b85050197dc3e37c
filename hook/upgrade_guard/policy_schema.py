"""The JSON Schema of the policy file (``upgrade-guard schema policy``): what policy.py reads,
with every rule's code and name, so an editor completes them. The policy is checked against
it first (json_schema.py); policy.py then checks what a schema cannot say (a counter's files
by its rule, names declared twice, an empty reason)."""

from __future__ import annotations

from typing import Any

from upgrade_guard import rules
from upgrade_guard.lifecycle.settings import BreakingChanges, Tier

_TEXT: dict[str, Any] = {"type": "string", "minLength": 1}
_CANONICAL: dict[str, Any] = {
    "description": "a canonical positive decimal, such as 4",
    "anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": "^[1-9][0-9]*$"},
    ],
}
_WHOLE: dict[str, Any] = {"type": "integer", "minimum": 0}


def _entry(properties: dict[str, Any], *required: str, about: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }
    return {"description": about, **entry} if about else entry


def _list(item: dict[str, Any], about: str) -> dict[str, Any]:
    return {"type": ["array", "null"], "description": about, "items": item}


def _rule_names() -> dict[str, Any]:
    """A rule by code or name, in any case: policy.py looks it up (and suggests the nearest
    spelling); the examples are for editors."""
    names = [name for rule in rules.ALL_RULES for name in (rule.code, rule.name)]
    return {
        "type": "string",
        "description": "a rule's code or name (upgrade-guard rules lists them)",
        "examples": names,
    }


def _lifecycle() -> dict[str, Any]:
    window = _entry({"releases": _WHOLE, "months": _WHOLE, "days": _WHOLE})
    tier = _entry(
        {
            "breaking-changes": {"enum": [str(choice) for choice in BreakingChanges]},
            "deprecation": window,
            "served-before-storage": window,
        }
    )
    declaration = _entry(
        {"crd": _TEXT, "version": _TEXT, "release": _TEXT, "reason": _TEXT},
        "crd",
        "version",
        "release",
        "reason",
    )
    tiers = sorted(str(each) for each in Tier)
    return {
        **_entry(
            {
                "tiers": {
                    **_entry({name: tier for name in tiers}),
                    "type": ["object", "null"],
                },
                "tier-overrides": _list(
                    _entry(
                        {"crd": _TEXT, "version": _TEXT, "tier": {"enum": tiers}},
                        "crd",
                        "version",
                        "tier",
                    ),
                    "a version whose name says one tier but is another",
                ),
                "breaks": _list(declaration, "a release that breaks a version on purpose"),
                "storage-migrations": _list(
                    declaration, "from this release, status.storedVersions no longer holds it"
                ),
            },
            about="verify-lifecycle: tiers, windows, tier overrides, declarations",
        ),
        "type": ["object", "null"],
    }


def _controller() -> dict[str, Any]:
    """What a CRD's controller handles on its objects: finalizers and condition vocabulary,
    and what it stopped handling on purpose (the hook reads both)."""
    names = {"type": "array", "items": _TEXT}
    retired = _entry(
        {
            "finalizer": _TEXT,
            "migration": {**_TEXT, "description": "how stored objects lose this finalizer"},
        },
        "finalizer",
        "migration",
    )
    condition_break = _entry(
        {
            "type": _TEXT,
            "condition-reasons": {**names, "minItems": 1, "description": "only these reasons"},
            "reason": {**_TEXT, "description": "why the type (or its reasons) may go"},
        },
        "type",
        "reason",
    )
    return _entry(
        {
            "crd": {**_TEXT, "description": "a CRD name, such as backups.example.io"},
            "finalizers": {**names, "description": "the finalizers its controller removes"},
            "conditions": {
                "type": "object",
                "description": "condition type -> its reasons (null: reasons not declared)",
                "additionalProperties": {"type": ["array", "null"], "items": _TEXT},
            },
            "retired-finalizers": _list(retired, "finalizers the controller no longer handles"),
            "condition-breaks": _list(condition_break, "condition types or reasons dropped"),
        },
        "crd",
    )


def policy_schema() -> dict[str, Any]:
    declared_break = _entry(
        {
            "crd": {**_TEXT, "description": "a CRD name, or a glob over names"},
            "rule": _rule_names(),
            "path": {**_TEXT, "description": "a dotted schema path, or a glob over paths"},
            "version": _TEXT,
            "schema-version": _CANONICAL,
            "reason": {"type": "string"},
            "old": {"description": "with new: a group, every finding with this change"},
            "new": {},
        },
        "crd",
        "rule",
        "reason",
    )
    restart = _entry(
        {
            "schema-version": _CANONICAL,
            "digests": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {
                    "type": "string",
                    "pattern": "^sha256:[0-9a-f]{64}$",
                    "description": "sha256: and 64 hex digits",
                },
            },
            "reason": _TEXT,
        },
        "schema-version",
        "digests",
        "reason",
    )
    counter = _entry(
        {
            "name": {
                "type": "string",
                "pattern": r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$",
                "description": "a counter name, such as controller-state-version",
            },
            "rule": {"enum": ["monotonic", "equal-when-unchanged"]},
            "files": {"type": "array", "items": _TEXT},
            "annotation": _TEXT,
            "paired-with-image": {"type": "boolean"},
        },
        "name",
        "rule",
    )
    label = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
    stored_state = _entry(
        {
            "resource": {
                "type": "string",
                "pattern": rf"^{label}(\.{label})*$",
                "description": "plural.group, such as widgets.example.com",
            },
            "version": _TEXT,
            "path": {
                "type": "string",
                "pattern": r"^[A-Za-z_$][-A-Za-z0-9_$]*(\.[A-Za-z_$][-A-Za-z0-9_$]*)*$",
                "description": "dotted field names, such as status.stateVersion",
            },
        },
        "resource",
        "path",
    )
    severities = {"enum": ["error", "warning", "info", "ignore"]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "upgrade-guard policy",
        **_entry(
            {
                "profile": {"enum": ["default", "strict"]},
                "versions": {"enum": ["served", "storage"]},
                "rules": {
                    "type": ["object", "null"],
                    "propertyNames": _rule_names(),
                    "additionalProperties": severities,
                },
                "declared-breaks": _list(declared_break, "findings the authors mean"),
                "annotation-prefix": {
                    "type": "string",
                    "pattern": rf"^{label}(\.{label})*/$",
                    "maxLength": 254,
                    "description": "a DNS subdomain followed by /, such as upgrade-guard.io/",
                },
                "restarts": _list(restart, "rollbacks of crd-schema-version verify-history admits"),
                "counters": _list(counter, "contract counters besides the schema version"),
                "stored-state": _list(stored_state, "where the controller writes its state"),
                "controllers": _list(_controller(), "what each CRD's controller handles"),
                "lifecycle": _lifecycle(),
            },
            about="severities, profile, declared breaks, counters, stored state, lifecycle",
        ),
    }
