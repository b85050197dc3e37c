"""validation/read_defaults.py: a value a GET returns may be a default applied on read only
when the live schema gives it where the object lacks it, no manager owns it and the object
was not written since the live CRD last changed (the facts measured on kube-apiserver
v1.35.4 by tests/cluster/test_hook_evidence.py's rollback rows)."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.apiserver.read_defaults import may_be_read_default

S = {"type": "string"}
LIVE = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "tier": {**S, "default": "gold"},
                "plain": S,
                "limits": {
                    "type": "object",
                    "default": {},
                    "properties": {"cpu": {**S, "default": "1"}},
                },
                "items": {"type": "array", "items": S},
            },
        }
    },
}


def widget(spec: dict[str, Any], rv: str = "100", owns: tuple[str, ...] = ()) -> dict[str, Any]:
    fields = {"f:spec": {f"f:{name}": {} for name in owns}}
    managed = [{"manager": "m", "operation": "Update", "fieldsV1": fields}]
    metadata = {"name": "w", "resourceVersion": rv, "managedFields": managed}
    return {"apiVersion": "x/v1", "kind": "Widget", "metadata": metadata, "spec": spec}


CRD_RV = "200"
ROWS = [
    ("the default, untouched since the CRD changed", widget({"tier": "gold"}), ["spec", "tier"],
     True),
    ("another value: a client wrote it", widget({"tier": "silver"}), ["spec", "tier"], False),
    ("a manager owns it: written", widget({"tier": "gold"}, owns=("tier",)), ["spec", "tier"],
     False),
    ("written after the CRD changed", widget({"tier": "gold"}, rv="201"), ["spec", "tier"],
     False),
    ("written just before it", widget({"tier": "gold"}, rv="199"), ["spec", "tier"], True),
    ("a field without a default", widget({"plain": "x"}), ["spec", "plain"], False),
    ("an object made of defaults", widget({"limits": {"cpu": "1"}}), ["spec", "limits"], True),
    ("an object holding a written value", widget({"limits": {"cpu": "2"}}), ["spec", "limits"],
     False),
    ("a list item is never a default", widget({"items": ["gold"]}), ["spec", "items", 0], False),
    ("absent", widget({}), ["spec", "tier"], False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "steps", "may_be"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_may_be_read_default(obj: dict[str, Any], steps: list[str | int], may_be: bool) -> None:
    assert may_be_read_default(obj, steps, [LIVE], CRD_RV) is may_be


def test_any_live_version_may_have_defaulted_it() -> None:
    other = {"type": "object", "properties": {"spec": {"type": "object", "properties": {}}}}
    obj = widget({"tier": "gold"})
    assert may_be_read_default(obj, ["spec", "tier"], [other, LIVE], CRD_RV)
    assert not may_be_read_default(obj, ["spec", "tier"], [other], CRD_RV)


def test_an_opaque_resource_version_tells_nothing() -> None:
    assert may_be_read_default(widget({"tier": "gold"}, rv="x9"), ["spec", "tier"], [LIVE], "8")
