"""Rules checked once per what they read (cel_compile.verdicts, over nodes cut down by
validation/cel_reads.py) get exactly the verdicts of each node's rules checked against the
node whole (cel_compile.site_verdicts): compile problems and doubts, oldSelf use, and
estimated costs. Held over every rule of every release of the corpus and the rule tables
of the compile and cost tests, each with nothing remembered and again with everything
remembered."""

from __future__ import annotations

import marshal
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from apiserver.test_cel_compile import MESSAGES, RULES, SPEC
from cel_cost_rows import NODE, ROWS
from corpus import require_corpus
from upgrade_guard.apiserver import cel_compile, cel_reads
from upgrade_guard.load.documents import load_documents

KUBE_VERSION = (1, 35)


def _assert_same_verdicts(roots: list[Mapping[str, Any]]) -> int:
    """Each root's verdicts both ways, remembering nothing first, then everything; the
    number of rules compared."""
    compared = 0
    for remembered in (False, True):
        if not remembered:
            cel_compile._VERDICTS.clear()
        for root in roots:
            sites = cel_reads.sites(root)
            whole = [cel_compile.site_verdicts(site, KUBE_VERSION) for site in sites]
            assert cel_compile.verdicts(sites, KUBE_VERSION) == whole, [s.parts for s in sites]
            compared += sum(len(site.rules) for site in sites)
    return compared // 2


def corpus_roots() -> Iterator[Mapping[str, Any]]:
    """Every distinct version schema of the corpus holding rules."""
    seen: set[bytes] = set()
    for document in load_documents(str(require_corpus())):
        body = document.body
        if not isinstance(body, dict) or body.get("kind") != "CustomResourceDefinition":
            continue
        for version in (body.get("spec") or {}).get("versions") or []:
            root = ((version or {}).get("schema") or {}).get("openAPIV3Schema")
            if not isinstance(root, dict) or b"x-kubernetes-validations" not in (
                written := marshal.dumps(root)
            ):
                continue
            if written not in seen:
                seen.add(written)
                yield root


def test_every_corpus_rule() -> None:
    assert _assert_same_verdicts(list(corpus_roots())) > 3_000


def _at_spec(node: Mapping[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    spec = {**node, "x-kubernetes-validations": rules}
    return {"type": "object", "properties": {"spec": spec}}


ROW_RULES: list[tuple[Mapping[str, Any], dict[str, Any]]] = [
    *((NODE, {"rule": rule}) for rule, _ in ROWS),
    *((SPEC, {"rule": rule}) for rule, _ in RULES),
    *((SPEC, {"rule": "true", "messageExpression": message}) for message, _ in MESSAGES),
    *(
        (SPEC, {"rule": rule, "optionalOldSelf": True})
        for rule in ("oldSelf.hasValue() && oldSelf.value().name == self.name", "self.name == 'a'")
    ),
]


@pytest.mark.parametrize(("node", "rule"), ROW_RULES, ids=[r["rule"] for _, r in ROW_RULES])
def test_rule_rows(node: Mapping[str, Any], rule: dict[str, Any]) -> None:
    """Each row's rule alone at its node, and beside every other row's rule."""
    _assert_same_verdicts([_at_spec(node, [rule])])


def test_rule_rows_together() -> None:
    for node in (NODE, SPEC):
        rules = [rule for at, rule in ROW_RULES if at is node]
        _assert_same_verdicts([_at_spec(node, rules), _at_spec(node, rules[::-1])])


@pytest.mark.parametrize(
    "rule",
    [
        "has(self.spec.name) && has(self.spec.nosuch)",
        "has(self.spec.tags) || has(self.spec.matrix)",
        "has(self.spec.labels.a) && self.spec.labels.a == 'x'",
        "has(self.metadata.name) && self.kind == 'X'",
        "self.spec.template.metadata.name == 'x' || has(self.spec.template.kind)",
        "has(self.untyped) || has(self.spec.name)",
    ],
)
def test_fields_only_tested_by_has(rule: str) -> None:
    """A field only tested by has() stands for any field of its object that CEL types; one
    that is missing, untyped, or also read another way, is kept as it is."""
    root = {
        "type": "object",
        "properties": {"spec": SPEC, "kind": {"type": "string"}, "untyped": {"type": "array"}},
        "x-kubernetes-validations": [{"rule": rule}],
    }
    _assert_same_verdicts([root])
