"""One schema walker: every piece of code that walks schemas visits the nodes it yields.

``schema.subschemas`` is the only place that knows which keywords hold schemas. Over every
CRD of the shared corpus, the loader's structural check, the digest's normalization and
``without_documentation`` each ask it about every schema node once, and the engine's value
locations (``children``) are the same nodes minus the branches of allOf/anyOf/oneOf/not.
The loader skips a subtree identical to one it checked already: every subtree it does not
ask about holds what a subtree it checked whole holds.
"""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from corpus import projects, require_corpus
from upgrade_guard import schema
from upgrade_guard.counters import digest
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import load_documents

_walk = schema.subschemas


def _nodes(node: Any, through_branches: bool = True) -> Iterator[int]:
    """The ids of the schema mappings at and below node, by the walker itself."""
    if not isinstance(node, Mapping):
        return
    yield id(node)
    for position in _walk(node):
        if through_branches or position.segment is not None:
            yield from _nodes(position.schema, through_branches)


def _visits(monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> Counter[int]:
    asked: Counter[int] = Counter()

    def recording(node: schema.Node) -> Iterator[schema.Position]:
        asked[id(node)] += 1
        return _walk(node)

    monkeypatch.setattr(schema, "subschemas", recording)
    try:
        run()
    finally:
        monkeypatch.setattr(schema, "subschemas", _walk)
    return asked


def _value_locations(node: schema.Node) -> None:
    for child in schema.children(node).values():
        _value_locations(child)


@pytest.mark.parametrize("project", projects() or ["<no corpus>"])
def test_every_schema_walk_visits_the_same_nodes(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = require_corpus()
    files = sorted((corpus / project).rglob("*.yaml"))
    # provider-upjet-aws has 2,885 CRDs per release: every 25th file keeps the test short.
    every = 1 if len(files) <= 500 else 25
    roots = 0
    for path in files[::every]:
        documents = list(load_documents(str(path)))
        loaded = _visits(monkeypatch, lambda documents=documents: crds_from(documents))
        roots_here = [
            crd.schema_of(version)
            for crd in crds_from(documents).values()
            for version in crd.versions
        ]
        checked = _checked_contents(roots_here, loaded)
        for root in roots_here:
            roots += 1
            _check_root(monkeypatch, path, root, loaded, checked)
    assert roots


def _checked_contents(roots: list[schema.Node], asked: Counter[int]) -> set[bytes]:
    """The contents of every subtree the loader checked whole: it asked about each node,
    except inside subtrees skipped as identical to one checked whole (repeated until no
    more are found: the one it matched may come later in this walk)."""
    known: set[bytes] = set()
    size = -1
    while size != len(known):
        size = len(known)
        for root in roots:
            _covered(root, asked, known)
    return known


def _covered(node: Any, asked: Counter[int], known: set[bytes]) -> bool:
    if not isinstance(node, Mapping):
        return True
    if not asked[id(node)]:
        return marshal.dumps(node, 2) in known
    inside = [_covered(position.schema, asked, known) for position in _walk(node)]
    if all(inside):
        known.add(marshal.dumps(node, 2))
    return all(inside)


def _skipped(node: Any, asked: Counter[int]) -> Iterator[schema.Node]:
    """The highest nodes the loader did not ask about."""
    if not isinstance(node, Mapping):
        return
    if not asked[id(node)]:
        yield node
        return
    for position in _walk(node):
        yield from _skipped(position.schema, asked)


def _check_root(
    monkeypatch: pytest.MonkeyPatch,
    path: Path,
    root: schema.Node,
    loaded: Counter[int],
    checked: set[bytes],
) -> None:
    every_node = Counter(_nodes(root))
    skipped = list(_skipped(root, loaded))
    assert all(marshal.dumps(top, 2) in checked for top in skipped), path
    unasked = Counter(node for top in skipped for node in _nodes(top))
    assert {node: loaded[node] + unasked[node] for node in every_node} == every_node, path
    assert _visits(monkeypatch, lambda: schema.without_documentation(root)) == every_node, path
    assert _visits(monkeypatch, lambda: digest.normalized_schema(root)) == every_node, path
    values = Counter(_nodes(root, through_branches=False))
    walked = _visits(monkeypatch, lambda: _value_locations(root))
    assert {node: walked[node] for node in values} == values, path
    assert sum(walked.values()) - sum(values.values()) == _true_maps(root), path


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
