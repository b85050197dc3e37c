"""One schema walker: every piece of code that walks schemas reaches every node it yields.

``schema.subschemas`` is the only place that knows which keywords hold schemas. Over the CRDs
of the shared corpus, what each walk does shows that it reached every schema node: a
``description`` planted in every node is gone after ``without_documentation`` and leaves the
digest's normalization unchanged; the engine's value locations (``children``) are the same
nodes minus the branches of allOf/anyOf/oneOf/not; and a value the apiserver refuses, planted
in the last node of a walk (the deepest, last-written), makes the loader refuse the CRD.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from corpus import projects, require_corpus
from upgrade_guard import schema
from upgrade_guard.counters import digest
from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import Document, LoadError, load_documents

PLANTED = "planted by the test"


def _nodes(node: Any, through_branches: bool = True) -> Iterator[Any]:
    """The schema mappings at and below node, by the walker itself."""
    if not isinstance(node, Mapping):
        return
    yield node
    for position in schema.subschemas(node):
        if through_branches or position.segment is not None:
            yield from _nodes(position.schema, through_branches)


def _value_locations(node: Any) -> Iterator[Any]:
    yield node
    for child in schema.children(node).values():
        yield from _value_locations(child)


@pytest.mark.parametrize("project", projects() or ["<no corpus>"])
def test_every_schema_walk_reaches_every_node(project: str) -> None:
    corpus = require_corpus()
    files = sorted((corpus / project).rglob("*.yaml"))
    # provider-upjet-aws has 2,885 CRDs per release: every 25th file keeps the test short.
    every = 1 if len(files) <= 500 else 25
    roots = 0
    for path in files[::every]:
        for crd in crds_from(list(load_documents(str(path)))).values():
            for version in crd.versions:
                roots += 1
                _check_root(path, crd, version)
    assert roots


def _check_root(path: Path, crd: Crd, version: str) -> None:
    root = crd.schemas[version]
    documented = copy.deepcopy(root)
    for node in _nodes(documented):
        node["description"] = PLANTED
    stripped = schema.without_documentation(documented)
    assert not any("description" in node for node in _nodes(stripped)), path
    assert stripped == schema.without_documentation(root), path
    assert digest.normalized_schema(documented) == digest.normalized_schema(root), path

    values = {id(node) for node in _nodes(root, through_branches=False)}
    reached = [id(node) for node in _value_locations(root)]
    assert values <= set(reached), path
    assert len(reached) - len(values) == _true_maps(root), path

    refused = copy.deepcopy(crd.raw)
    entry = next(v for v in refused["spec"]["versions"] if v["name"] == version)
    *_, last = _nodes(entry["schema"]["openAPIV3Schema"])
    last["maxLength"] = PLANTED
    with pytest.raises(LoadError, match=r"\(maxLength\)"):
        crds_from([Document(Source(str(path)), 1, refused)])


def _true_maps(node: Any) -> int:
    """How many value locations are ``additionalProperties: true`` (each an empty schema)."""
    if not isinstance(node, Mapping):
        return 0
    own = 1 if node.get("additionalProperties") is True else 0
    return own + sum(_true_maps(child) for child in schema.children(node).values() if child)


ANY_MAP = {"type": "object", "additionalProperties": True}


def test_additional_properties_true_is_an_empty_schema_where_values_are_compared() -> None:
    assert schema.children(ANY_MAP) == {"*": {}}
    assert schema.children({"type": "object", "additionalProperties": False}) == {}


def test_additional_properties_true_is_kept_as_written_by_every_rebuild() -> None:
    documented = {**ANY_MAP, "description": "any map"}
    assert schema.without_documentation(documented) == ANY_MAP
    assert digest.normalized_schema(documented) == ANY_MAP


def test_null_keywords_are_absent_and_rebuilds_leave_null_positions_out() -> None:
    node = {"type": "object", "properties": {"a": None, "b": {"type": "string"}}, "not": None}
    assert [(p.keyword, p.key) for p in schema.subschemas(node)] == [
        ("properties", "a"),
        ("properties", "b"),
    ]
    assert schema.without_documentation(node) == {
        "type": "object",
        "properties": {"b": {"type": "string"}},
    }
