"""The rule sites of a version schema found along the places its CRD check found rules
(crd_validation._check_schema, then _rule_places; cel_reads.sites with ``holding``) are those
of the whole walk (cel_reads.sites alone), and a schema with sites always has places. Held
over every version schema of every release pair of the corpus, read as a diff reads them (the
new side, then the old beside it, one set of passed subtrees), and over rows where the key is
where the walk might take it wrongly, each beside its nearest neighbour."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

import crd_builders
from corpus import CORPUS, pairs, require_corpus
from upgrade_guard.apiserver import cel_reads, crd_validation
from upgrade_guard.load.crds import API_VERSION, crds_from, is_crd
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, documents_of, load_documents

RULE = [{"rule": "self.a == 'x'"}]
S = {"type": "string"}


def _sites(sites: list[cel_reads.Site]) -> list[tuple[Any, ...]]:
    return [(s.parts, id(s.node), s.resource_root, s.uncorrelatable, s.cardinality) for s in sites]


def _assert_places(body: Mapping[str, Any], checked: Mapping[str, Any] | None, passed: Any) -> int:
    """Each version schema of body checked (beside its namesake in ``checked``) and its
    sites found both ways; the number of sites."""
    besides = {
        version.get("name"): version["schema"]["openAPIV3Schema"]
        for version in ((checked or {}).get("spec") or {}).get("versions") or []
    }
    found = 0
    for version in body["spec"]["versions"]:
        root = version["schema"]["openAPIV3Schema"]
        beside = besides.get(version.get("name"))
        status = (version.get("subresources") or {}).get("status") is not None
        rules_at = crd_validation._check_schema(root, status, passed, beside)
        nodes, regions = crd_validation._rule_places(root, rules_at, passed)
        whole = cel_reads.sites(root)
        assert nodes or regions or not whole
        assert _sites(cel_reads.sites(root, nodes, regions)) == _sites(whole)
        found += len(whole)
    return found


def _crds(side: str) -> dict[str, Any]:
    return {
        document.body["metadata"]["name"]: document.body
        for document in load_documents(side, DEFAULT_MAX_BYTES)
        if is_crd(document.body) and document.body.get("apiVersion") == API_VERSION
    }


def test_every_corpus_pair() -> None:
    require_corpus()
    found = 0
    for project, old, new in pairs():
        passed = crd_validation.Passed()
        after = _crds(str(CORPUS / project / new))
        before = _crds(str(CORPUS / project / old))
        for body in after.values():
            found += _checked(body, None, passed)
        for name, body in before.items():
            found += _checked(body, after.get(name), passed)
    assert found > 3_000


def _checked(body: Mapping[str, Any], checked: Mapping[str, Any] | None, passed: Any) -> int:
    try:
        return _assert_places(body, checked, passed)
    except crd_validation.CrdInvalid:  # refused: its rules are never looked for
        return 0


def _crd(root: Mapping[str, Any]) -> dict[str, Any]:
    return {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": root}}]}}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _ruled(node: dict[str, Any]) -> dict[str, Any]:
    return {**node, "x-kubernetes-validations": RULE}


def _described(node: dict[str, Any]) -> dict[str, Any]:
    return {**node, "description": "rules go in x-kubernetes-validations"}


def _named(node: dict[str, Any]) -> dict[str, Any]:
    return _object(**{"x-kubernetes-validations": node})


def _in_map(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": _object(n=node)}


def _deep(node: dict[str, Any]) -> dict[str, Any]:
    return _object(x=_object(y={"type": "array", "items": _object(z=node)}))


def _embedded(node: dict[str, Any]) -> dict[str, Any]:
    return {**node, "x-kubernetes-embedded-resource": True}


def _int_named(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {1: node}}


def _twice(node: dict[str, Any]) -> dict[str, Any]:
    """node three levels down, twice: the second is a subtree that passed already."""
    repeated = _object(b=_object(c=node))
    return _object(p=_object(q=repeated), r=_object(s=repeated))


def _taken_over_then_again(node: dict[str, Any], u: dict[str, Any]) -> dict[str, Any]:
    """node three levels down in a subtree that changed (u) beside the same subtree on the
    other side (where node is taken over), then that subtree again elsewhere (where, had
    it passed, it would not be walked)."""
    changed = _object(t=node, u=u)
    return _object(spec=_object(b=_object(s=changed), a=_object(s=changed)))


A = _object(a=S)
ENUM = {"type": "string", "enum": ["x-kubernetes-validations"]}
INT = {"type": "integer"}

# (what the row shows, the schema of one side, the other side's or None)
ROWS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("a rule at the root", _ruled(A), None),
    ("no rule", A, None),
    ("the key in a description", _object(spec=_described(A)), None),
    ("a rule beside the key in a description", _object(spec=_described(_ruled(A))), None),
    ("the key as a property name", _object(spec=_named(A)), None),
    ("a rule under the key as a property name", _object(spec=_named(_ruled(A))), None),
    ("the key as an enum value", _object(spec=_object(e=ENUM)), None),
    ("a rule beside the key as an enum value", _object(spec=_ruled(_object(e=ENUM))), None),
    ("a rule deep under items", _object(spec=_deep(_ruled(A))), None),
    ("no rule deep under items", _object(spec=_deep(A)), None),
    ("a rule under additionalProperties", _object(spec=_object(m=_in_map(_ruled(A)))), None),
    ("no rule under additionalProperties", _object(spec=_object(m=_in_map(A))), None),
    ("a rule in an embedded resource", _object(spec=_object(t=_embedded(_ruled(A)))), None),
    ("no rule in an embedded resource", _object(spec=_object(t=_embedded(A))), None),
    ("a rule under a property a YAML integer names", _object(spec=_int_named(_ruled(A))), None),
    ("no rule under a property a YAML integer names", _object(spec=_int_named(A)), None),
    ("a rule in a subtree passed already", _twice(_ruled(A)), None),
    ("no rule in a subtree passed already", _twice(A), None),
    (
        "a rule taken over from the other side",
        _object(spec=_deep(_ruled(A)), n=S),
        _object(spec=_deep(_ruled(A)), n=INT),
    ),
    (
        "no rule taken over from the other side",
        _object(spec=_deep(A), n=S),
        _object(spec=_deep(A), n=INT),
    ),
    (
        "a rule beside what is taken over",
        _ruled(_object(spec=_deep(A), n=S)),
        _ruled(_object(spec=_deep(A), n=INT)),
    ),
    (
        "a rule changed beside a rule taken over",
        _object(spec=_object(x=_deep(_ruled(A)), a=S)),
        _object(spec=_object(x=_deep(_ruled(A)), a=_ruled(A))),
    ),
    (
        "a rule taken over in a changed subtree that comes back",
        _object(spec=_object(a=_object(s=_object(t=_object(c=_ruled(A)), u=S)))),
        _taken_over_then_again(_object(c=_ruled(A)), INT),
    ),
    (
        "no rule taken over in a changed subtree that comes back",
        _object(spec=_object(a=_object(s=_object(t=_object(c=A), u=S)))),
        _taken_over_then_again(_object(c=A), INT),
    ),
    (
        "a rule in a subtree passed already on the other side, taken over",
        _object(spec=_twice(_ruled(A)), n=S),
        _object(spec=_twice(_ruled(A)), n=INT),
    ),
]


@pytest.mark.parametrize(("first", "second"), [row[1:] for row in ROWS], ids=[r[0] for r in ROWS])
@pytest.mark.parametrize("remembered", [True, False], ids=["remembered", "forgotten"])
def test_rows(first: dict[str, Any], second: dict[str, Any] | None, remembered: bool) -> None:
    """Each row's first side alone, then its other side beside it (the first side's places
    remembered, or forgotten: what is taken over is then told by its serialization)."""
    passed = crd_validation.Passed()
    body = _crd(first)
    _assert_places(body, None, passed)
    if second is not None:
        if not remembered:
            passed.places.clear()
        _assert_places(_crd(second), body, passed)


@pytest.mark.parametrize(
    ("normalize", "remembered"), [(False, 1), (True, 0)], ids=["as read", "normalized"]
)
def test_places_held_for_the_crds_kept_as_read(normalize: bool, remembered: int) -> None:
    """The places are remembered of the schemas a load keeps as it read them, where the other
    side of a diff can look for them; of CRDs kept normalized (the hook's) they are let go
    of, as they would keep the schemas as read alive (85 MiB of peak RSS in the hook for
    the provider chart, tools/bench_hook.py)."""
    body = crd_builders.crd(crd_builders.version(schema=_object(spec=_ruled(A))))
    passed = crd_validation.Passed()
    documents = documents_of("widgets.json", json.dumps(body).encode())
    assert list(crds_from(documents, passed=passed, normalize=normalize)) == [crd_builders.NAME]
    assert len(passed.places) == remembered
