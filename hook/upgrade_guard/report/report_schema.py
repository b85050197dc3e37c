"""The JSON Schema of ``--output json``: one shape for every command, versioned by
``schemaVersion`` (raised when a key changes meaning or goes; new keys may come without it).
``upgrade-guard schema report`` prints it."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 2

_TEXT: dict[str, Any] = {"type": "string"}
_TEXT_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_VERSION_OR_NULL: dict[str, Any] = {"type": ["integer", "null"], "minimum": 1}
_SEVERITY: dict[str, Any] = {"enum": ["error", "warning", "info"]}
_ANY: dict[str, Any] = {"description": "any JSON value: a schema value, or a release"}


def _object(properties: dict[str, Any], description: str) -> dict[str, Any]:
    """An object holding exactly these keys, every one always present."""
    return {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_JUDGED = {
    "code": {"type": "string", "pattern": "^UG[0-9]{3}$"},
    "rule": _TEXT,
    "severity": _SEVERITY,
}
_EXCUSE = {
    "excused": {"type": "boolean"},
    "reason": {**_TEXT_OR_NULL, "description": "the declared break's reason, when excused"},
}
_OBJECT_OR_NULL: dict[str, Any] = {"type": ["object", "null"]}
_WITNESS = _object(
    {
        "version": {**_TEXT, "description": "the CRD version it is written and operated at"},
        "operation": {
            "enum": ["create", "update", "read", "status", "apply-crd", "apply-old-crd", "apply"]
        },
        "stored": {
            "type": "object",
            "description": (
                "the object written (CREATE) while the old CRD is live (once the new CRD"
                " is applied, with stored_under new)"
            ),
        },
        "object": {
            **_OBJECT_OR_NULL,
            "description": (
                "the UPDATE's body, the /status write's, or that of a CREATE read back"
                " changed; null otherwise"
            ),
        },
        "apiserver": {"enum": ["refuses", "reads back changed"]},
        "message": {
            **_TEXT,
            "description": "a fragment of the apiserver's refusal, or the read's patch as text",
        },
        "read_back": {
            **_OBJECT_OR_NULL,
            "description": "what a GET returns, where it reads back changed",
        },
        "read_version": {
            **_TEXT_OR_NULL,
            "description": (
                "the served version the operation is made at, where not version (an object"
                " written at version, read or written back at another: conversion None)"
            ),
        },
        "stored_under": {
            "enum": ["new", None],
            "description": (
                "new: stored is written once the new CRD is applied, not while the old one"
                " is live (UG110: a disagreement only objects written after the upgrade meet)"
            ),
        },
        "applied": {
            "type": ["array", "null"],
            "items": _object(
                {"manager": _TEXT, "object": {"type": "object"}},
                "a server-side apply: its field manager and body",
            ),
            "description": (
                "for apply (UG215): the server-side applies made while the old CRD is live,"
                " in order, which store stored; null for every other witness"
            ),
        },
    },
    "an object the old CRD accepts that the new one refuses or reads back changed",
)
_FINDING = _object(
    {
        **_JUDGED,
        "crd": {
            **_TEXT_OR_NULL,
            "description": "the CRD's name; null for a finding about the CRDs as a whole",
        },
        "version": {**_TEXT_OR_NULL, "description": "null for a CRD-level finding; A->B for UG110"},
        "path": {**_TEXT_OR_NULL, "description": "dotted from the schema root; null at CRD level"},
        "message": _TEXT,
        **_EXCUSE,
        "notes": {"type": "array", "items": _TEXT},
        "old": _ANY,
        "new": _ANY,
        "proven": {
            "type": ["boolean", "null"],
            "description": "for an error of a CRD rule (UG1xx, UG2xx): whether it carries a"
            " witness; null for any other finding",
        },
        "witness": {"oneOf": [{"type": "null"}, _WITNESS]},
    },
    "one finding",
)
_GROUP = _object(
    {
        **_JUDGED,
        "message": _TEXT,
        **_EXCUSE,
        "old": _ANY,
        "new": _ANY,
        "count": {"type": "integer", "minimum": 2},
        "crds": {"type": "array", "items": _TEXT},
        "places": {
            "type": "array",
            "items": _TEXT,
            "description": 'the first places, each "crd version path"',
        },
    },
    "an identical change found at two or more places, told once; each stays in findings",
)
_HISTORY = _object(
    {
        "baseline": _TEXT,
        "candidate": _TEXT,
        "source": {**_TEXT, "description": "how the baseline was chosen"},
        "schema": _object(
            {
                "baseline_version": _VERSION_OR_NULL,
                "candidate_version": _VERSION_OR_NULL,
                "changed": {"type": "boolean"},
                "changes": {"type": "array", "items": _TEXT},
                "first_adoption": {"type": "boolean"},
                "restart": {**_TEXT_OR_NULL, "description": "the admitted restart's reason"},
            },
            "the crd-schema-version and whether the normalized specs changed",
        ),
        "counters": {
            "type": "array",
            "items": _object(
                {
                    "name": _TEXT,
                    "rule": {"enum": ["monotonic", "equal-when-unchanged"]},
                    "baseline": _VERSION_OR_NULL,
                    "candidate": _VERSION_OR_NULL,
                    "files_changed": {"type": ["boolean", "null"]},
                },
                "one contract counter",
            ),
        },
        "notes": {"type": "array", "items": _TEXT},
    },
    "what verify-history compared",
)

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "upgrade-guard report",
    **_object(
        {
            "schemaVersion": {"const": SCHEMA_VERSION},
            "verdict": {"enum": ["safe", "unsafe"]},
            "policy": {**_TEXT, "description": 'the policy file, or "none (built-in defaults)"'},
            "summary": _object(
                {
                    "error": _COUNT,
                    "warning": _COUNT,
                    "info": _COUNT,
                    "excused": _COUNT,
                    "unproven": _COUNT,
                },
                "findings by severity, excused ones apart; unproven: errors of CRD rules"
                " without a witness (excused ones included)",
            ),
            "history": {
                "oneOf": [{"type": "null"}, _HISTORY],
                "description": "verify-history's baseline and counters; null for the others",
            },
            "findings": {"type": "array", "items": _FINDING},
            "groups": {"type": "array", "items": _GROUP},
        },
        "the report of diff, hook, verify-history and verify-lifecycle with --output json",
    ),
}
