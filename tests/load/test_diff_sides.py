"""The two sides of a diff: which problem is reported first, and what they hold once.

The new side is read and checked before the old one, which is read a file at a time and
takes over every schema subtree identical to the new side's at the same place; problems still
come in the order of reading the old side whole first."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from crd_builders import NAME, crd, field_crd, version
from upgrade_guard.crd import Crd
from upgrade_guard.load.crds import diff_sides
from upgrade_guard.load.documents import LoadError, load_documents


def _side(tmp_path: Path, side: str, files: dict[str, Any]) -> str:
    (tmp_path / side).mkdir()
    for name, body in files.items():
        (tmp_path / side / name).write_text(json.dumps(body) if isinstance(body, dict) else body)
    return str(tmp_path / side)


REFUSED = crd(version(schema={"type": "array"}))
FINE = crd()
UNREADABLE = "{"
ORDER = {
    "the old side's reading before the new side's CRDs": (
        {"b.json": UNREADABLE},
        {"a.json": REFUSED},
        "old/b.json",
    ),
    "the new side's reading before the old side's CRDs": (
        {"a.json": REFUSED},
        {"b.json": UNREADABLE},
        "new/b.json",
    ),
    "the new side's CRDs before the old side's": ({"a.json": REFUSED}, {"b.json": REFUSED}, "new/"),
    "the old side's reading, further on, before its CRDs": (
        {"a.json": REFUSED, "z.json": UNREADABLE},
        {"b.json": FINE},
        "old/z.json",
    ),
    "a refused old CRD alone": ({"a.json": REFUSED}, {"b.json": FINE}, "old/a.json"),
}


@pytest.mark.parametrize("old, new, named", ORDER.values(), ids=ORDER.keys())
def test_the_first_problem_reported(
    old: dict[str, Any], new: dict[str, Any], named: str, tmp_path: Path
) -> None:
    old_side, new_side = _side(tmp_path, "old", old), _side(tmp_path, "new", new)
    with pytest.raises(LoadError, match=re.escape(str(tmp_path / named))):
        diff_sides(load_documents(old_side), load_documents(new_side))


def _spec_of(loaded: Crd) -> Any:
    return loaded.raw["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


OLD_FIELD = {"type": "integer", "minimum": 1}
SHARING = {
    "identical": (OLD_FIELD, True),
    "1 against 1.0": ({"type": "integer", "minimum": 1.0}, False),
    "another keyword": ({"type": "integer", "maximum": 1}, False),
}


@pytest.mark.parametrize("new_field, shared", SHARING.values(), ids=SHARING.keys())
def test_the_old_side_holds_what_is_identical_as_the_new_side_does(
    new_field: dict[str, Any], shared: bool, tmp_path: Path
) -> None:
    old = _side(tmp_path, "old", {"a.json": field_crd(OLD_FIELD)})
    new = _side(tmp_path, "new", {"a.json": field_crd(new_field)})
    before, after = diff_sides(load_documents(old), load_documents(new))
    old_spec, new_spec = _spec_of(before[NAME]), _spec_of(after[NAME])
    assert (old_spec is new_spec) is shared
    assert old_spec == {"type": "object", "properties": {"field": OLD_FIELD}}


def _ruled(rule: str) -> dict[str, Any]:
    node = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": rule}],
    }
    return field_crd(node)


# The apiserver compiles and costs the rules of the CRD it is given, never again those of the
# CRD it holds (ValidateCustomResourceDefinitionUpdate validates the new object): the old side
# is what is stored, which an older apiserver may have accepted, so its rules are only read.
FINE_RULE = _ruled("self.size() < 10")
RULES_CHECKED = {
    "not compiling, new side": (FINE_RULE, _ruled("self.nosuch > 0"), "compilation failed"),
    "not compiling, old side": (_ruled("self.nosuch > 0"), FINE_RULE, None),
    "over budget, new side": (FINE_RULE, _ruled("self.all(x, self.all(y, x == y))"), "budget"),
    "over budget, old side": (_ruled("self.all(x, self.all(y, x == y))"), FINE_RULE, None),
}


@pytest.mark.parametrize("old, new, refused", RULES_CHECKED.values(), ids=RULES_CHECKED.keys())
def test_only_the_new_sides_rules_are_compiled_and_costed(
    old: dict[str, Any], new: dict[str, Any], refused: str | None, tmp_path: Path
) -> None:
    old_side = _side(tmp_path, "old", {"a.json": old})
    new_side = _side(tmp_path, "new", {"a.json": new})
    if refused is None:
        before, _ = diff_sides(load_documents(old_side), load_documents(new_side))
        assert before[NAME].raw == old
        return
    with pytest.raises(LoadError, match=f"new/a.json.*{re.escape(refused)}"):
        diff_sides(load_documents(old_side), load_documents(new_side))
