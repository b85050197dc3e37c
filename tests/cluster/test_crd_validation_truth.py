"""CRD validation held to the real apiserver: `diff` exits 2 exactly when it refuses a CRD.

A seeded hypothesis search mutates corpus CRDs (read in place from ../shared/corpus): one
schema keyword set to a value of the right or the wrong JSON type, a keyword removed, a
default added, a CRD-level field (names, group, scope, versions, conversion) changed, or a
CEL rule changed (see ``_cel_change``: rules edited or added against the schema's types,
oldSelf moved under a list, messageExpression, optionalOldSelf, reason, fieldPath), or a
bound a rule's cost grows with set or removed (see ``_cost_change``). Each
mutation goes to the real kube-apiserver as a server-side dry-run CREATE and, as the old or
the new side, to ``upgrade-guard diff`` against the unmutated CRD. ``diff`` must exit 2
exactly when the apiserver refuses the mutated CRD, and never 4; on the old side, which the
apiserver holds and does not check again, when it refuses it without its CEL rules
(``as_stored``).

The corpus CRDs keep their x-kubernetes-validations. Rules are added only where a rule's
cost is not multiplied by an unbounded list (except oldSelf under a list that is not a map,
refused whatever its cost): the cost estimate is validation/cel_cost's. Object metadata
other than the name and the conversion webhook's service are not judged (charts render
them; see load/crd_validation.py), so the bases are rendered first. Every disagreement
found is kept in REGRESSIONS, each row checked against both the apiserver and the tool.
``UG_CRD_MUTATIONS`` sets the number of mutations (default 600: under a minute on an idle
machine). The search and the rows run on the newest and on the oldest minor's apiserver
(issue 38), ``diff`` told the oldest with ``--kube-version``; ``ON_OLDEST`` holds the rows
that apiserver answers otherwise.
"""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from corpus import CORPUS, require_corpus
from testenv import MINORS, NEWEST_MINOR, OLDEST_MINOR, Cluster, KubeError
from upgrade_guard.apiserver.cel_types import escape
from upgrade_guard.cli import app
from upgrade_guard.load.documents import load_documents

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MUTATIONS = int(os.environ.get("UG_CRD_MUTATIONS", "600"))
# Corpus CRDs small enough for quick round trips, from every project and several releases.
BASES = (
    "argo-cd/v3.5.1/appprojects.argoproj.io.yaml",
    "argo-cd/v2.0.0/appprojects.argoproj.io.yaml",
    "cert-manager/v1.21.1/certificates.cert-manager.io.yaml",
    "cert-manager/v1.21.1/orders.acme.cert-manager.io.yaml",
    "cert-manager/v1.0.0/issuers.cert-manager.io.yaml",
    "istio/1.30.3/peerauthentications.security.istio.io.yaml",
    "istio/1.30.3/wasmplugins.extensions.istio.io.yaml",
    "kyverno/v1.19.0/policyreports.wgpolicyk8s.io.yaml",
    "kyverno/v1.19.0/ephemeralreports.reports.kyverno.io.yaml",
    "prometheus-operator/v0.93.0/prometheusrules.monitoring.coreos.com.yaml",
    "prometheus-operator/v0.93.0/servicemonitors.monitoring.coreos.com.yaml",
    "prometheus-operator/v0.39.0/podmonitors.monitoring.coreos.com.yaml",
    "provider-upjet-aws/v2.0.0/domains.lightsail.aws.m.upbound.io.yaml",
    "kyverno/v1.19.0/updaterequests.kyverno.io.yaml",
)

S = {"type": "string"}
# Values a keyword is set to: right and wrong JSON types, valid and invalid values.
KEYWORD_VALUES: dict[str, list[Any]] = {
    "type": ["string", "integer", "number", "boolean", "object", "array", "bogus", "",
             ["string", "integer"], 5, None],
    "enum": ["a", ["a", "b"], [1], [], {"a": 1}],
    "maxLength": [-1, 0, 3, 1.5, "abc", True],
    "minItems": [0, 2, -1, "2", 2.5],
    "maxProperties": [1, "1", False],
    "maximum": [0, 1.5, -3, "1", True],
    "minimum": [10, "x"],
    "multipleOf": [0, 2, 0.5, "x"],
    "exclusiveMaximum": [True, False, 1],
    "pattern": ["^[a-z]+$", "(", "[a-", "*a", "(?=x)", "\\d+", 5, "a(?i)b", "a{2,1}"],
    "format": ["date-time", "bogus", "int32", 5],
    "required": ["name", ["a"], [1], [], ["a", "a"]],
    "nullable": [True, False, "yes", 1],
    "uniqueItems": [True, False],
    "x-kubernetes-preserve-unknown-fields": [True, False, "true"],
    "x-kubernetes-int-or-string": [True, False],
    "x-kubernetes-embedded-resource": [True, False],
    "x-kubernetes-list-type": ["atomic", "set", "map", "bogus", 1],
    "x-kubernetes-list-map-keys": [["name"], [], "name", ["a", "a"]],
    "x-kubernetes-map-type": ["atomic", "granular", "bogus"],
    "x-kubernetes-validations": [[{"rule": 5}], [{"rule": "true"}], "self", [{"message": 1}]],
    "$ref": ["#/definitions/x"],
    "items": [[S], S, "x", {}],
    "properties": [[], {"zz": S}, {"zz": {}}, "x", {"zz": None}],
    "additionalProperties": [True, False, S, "x"],
    "not": [{"maxLength": 3}, S, "x"],
    "anyOf": [[{"required": ["a"]}], [S], "x", [{"default": 1}], [{"maxLength": 2}]],
    "allOf": [[{"properties": {"zz": {"maxLength": 2}}}], [{"nullable": True}]],
    "default": ["a", 5, 1.5, True, {}, {"zz": 1}, [], ["a"], None],
    "description": [5, "x"],
}  # fmt: skip
NAME_VALUES = ["widgets", "Widgets", "wid_gets", "w", "Widget", "WidgetList", "wid-get", "", 5]


def _rendered(body: dict[str, Any]) -> dict[str, Any]:
    """The CRD as a chart renders it: some corpus CRDs are unrendered templates whose labels,
    annotations and webhook service hold ``{{ ... }}``, which the tool does not judge."""
    body.pop("status", None)
    body["metadata"] = {"name": body["metadata"]["name"]}
    webhook = (body["spec"].get("conversion") or {}).get("webhook") or {}
    if "service" in (webhook.get("clientConfig") or {}):
        webhook["clientConfig"]["service"].update(namespace="operators", name="webhook")
    return body


def _load_bases() -> list[dict[str, Any]]:
    require_corpus()
    bases = []
    for relative in BASES:
        for document in load_documents(str(CORPUS / relative)):
            if isinstance(document.body, dict) and document.body.get("kind") == (
                "CustomResourceDefinition"
            ):
                bases.append(_rendered(document.body))
    return bases


def _schema_nodes(root: Any) -> list[dict[str, Any]]:
    """Every schema node of a version, root first."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        found.append(node)
        stack.extend((node.get("properties") or {}).values())
        stack.extend(v for k, v in node.items() if k in ("items", "additionalProperties", "not"))
        for keyword in ("allOf", "anyOf", "oneOf"):
            stack.extend(node.get(keyword) or [])
    return found


Case = tuple[dict[str, Any], dict[str, Any], str]


@st.composite
def mutations(draw: st.DrawFn, bases: list[dict[str, Any]]) -> Case:
    """A corpus CRD, the same with one change, and a description of the change."""
    base = draw(st.sampled_from(bases))
    body = copy.deepcopy(base)
    versions = body["spec"]["versions"]
    kinds = ["keyword"] * 6 + ["remove"] * 2 + ["crd"] * 2 + ["cel"] * 5 + ["cost"] * 3
    kind = draw(st.sampled_from(kinds))
    if kind == "cel":
        return base, body, _cel_change(draw, body)
    if kind == "cost":
        return base, body, _cost_change(draw, body)
    if kind in ("keyword", "remove"):
        index = draw(st.integers(0, len(versions) - 1))
        nodes = _schema_nodes(versions[index]["schema"]["openAPIV3Schema"])
        node = nodes[draw(st.integers(0, min(len(nodes), 60) - 1))]
        if kind == "remove":
            keys = sorted(node)
            if not keys:
                return base, body, "nothing"
            key = draw(st.sampled_from(keys))
            del node[key]
            return base, body, f"versions[{index}] node {nodes.index(node)}: removed {key}"
        keyword = draw(st.sampled_from(sorted(KEYWORD_VALUES)))
        value = copy.deepcopy(draw(st.sampled_from(KEYWORD_VALUES[keyword])))
        node[keyword] = value
        return (
            base,
            body,
            f"versions[{index}] node {nodes.index(node)}: {keyword}={json.dumps(value)}",
        )
    return base, body, _crd_change(draw, body)


def _crd_change(draw: st.DrawFn, body: dict[str, Any]) -> str:
    spec = body["spec"]
    versions = spec["versions"]
    field = draw(
        st.sampled_from(
            ["names", "group", "scope", "storage", "version-name", "schema", "conversion",
             "preserveUnknownFields", "served"]
        )
    )  # fmt: skip
    if field == "names":
        key = draw(st.sampled_from(["plural", "singular", "kind", "listKind", "shortNames",
                                    "categories"]))  # fmt: skip
        value: Any = draw(st.sampled_from(NAME_VALUES))
        if key in ("shortNames", "categories"):
            value = [value]
        spec["names"][key] = value
        if key == "plural" and draw(st.booleans()):
            body["metadata"]["name"] = f"{value}.{spec['group']}"
        return f"names.{key}={json.dumps(value)}"
    if field == "group":
        value = draw(st.sampled_from(["example", "Example.com", "ex_ample.com", "a.b", ""]))
        spec["group"] = value
        if draw(st.booleans()):
            body["metadata"]["name"] = f"{spec['names']['plural']}.{value}"
        return f"group={value!r}"
    if field == "scope":
        spec["scope"] = draw(st.sampled_from(["Global", "", "Cluster", 5]))
        return f"scope={spec['scope']!r}"
    if field == "storage":
        flags = draw(st.lists(st.booleans(), min_size=len(versions), max_size=len(versions)))
        for version, flag in zip(versions, flags, strict=True):
            version["storage"] = flag
        return f"storage flags {flags}"
    if field == "version-name":
        value = draw(st.sampled_from(["V1", "1v", "v1_beta", versions[0]["name"], "v9"]))
        versions[-1]["name"] = value
        return f"last version named {value!r}"
    if field == "schema":
        del versions[0]["schema"]
        return "first version without schema"
    if field == "conversion":
        spec["conversion"] = draw(
            st.sampled_from(
                [
                    {"strategy": "Bogus"},
                    {"strategy": "Webhook"},
                    {"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}},
                    {"strategy": "None"},
                    "None",
                ]
            )
        )
        return f"conversion={json.dumps(spec['conversion'])}"
    if field == "served":
        versions[0]["served"] = draw(st.sampled_from([False, "yes", None]))
        return f"served={versions[0]['served']!r}"
    spec["preserveUnknownFields"] = draw(st.sampled_from([True, False, "no"]))
    return f"preserveUnknownFields={spec['preserveUnknownFields']!r}"


# CEL rules ------------------------------------------------------------------------------------
# Edits of a rule's text; each keeps the rule's cost, or makes it not compile.
RULE_EDITS: dict[str, Callable[[str], str]] = {
    "a field renamed": lambda r: re.sub(r"\bself\.([A-Za-z_]\w*)", r"self.\1_x", r, count=1),
    "a string literal made an int": lambda r: re.sub(r"'[^'\\]*'", "1", r, count=1),
    "an int literal made a string": lambda r: re.sub(r"(?<![\w.'])\d+(?![\w.'])", "'1'", r,
                                                    count=1),
    "made an int": lambda r: f"({r}) ? 1 : 0",
    "negated": lambda r: f"!({r})",
    "self made oldSelf": lambda r: re.sub(r"\bself\b", "oldSelf", r, count=1),
    "cut short": lambda r: f"{r} &&",
}  # fmt: skip
# New rules over a node's property {p} (its escaped name), or over the node itself.
PROPERTY_RULES = ["has(self.{p})", "has(self.{p}_zz)", "self.{p} == 1", "self.{p} == 'a'",
                  "self.{p} == true", "self.{p}.size() >= 0", "self.{p}.startsWith('a')",
                  "self.{p} == 1.5", "self.{p} > 1", "self.{p}.x == 1",
                  "self.?{p}.hasValue()"]  # fmt: skip
SELF_RULES = ["self == 1", "self == 'a'", "self == true", "self.size() >= 0", "self.zz == 1",
              "has(self.zz)", "self == oldSelf", "self", "self == null", "self > 1.5",
              "self.startsWith('a')", "duration('1m') > duration('1s')", "duration('1x') == self",
              "self.matches('[a-')", "self.matches('^[a-z]+$')"]  # fmt: skip
# Cheap rules using oldSelf, to put under a list's items (where it cannot be used).
OLD_SELF_RULES = ["self == oldSelf", "has(oldSelf.zz)", "oldSelf.size() >= 0", "oldSelf == 1"]
MESSAGE_EXPRESSIONS = ["'x'", "1", "self", "self.zz", "'", "string(self)", "'a' + 'b'"]
REASONS = ["FieldValueInvalid", "FieldValueRequired", "Nope", ""]
FIELD_PATHS = [".zz", "zz", " ", ".a.b", "['x']", "."]


def _rule_nodes(
    node: Any, under_list: bool = False, uncorrelatable: bool = False
) -> Iterator[tuple[dict[str, Any], bool, bool]]:
    """Every schema node that CEL types, with whether a list is above it and whether one
    that is not a map list is (where oldSelf cannot be used)."""
    if not isinstance(node, dict):
        return
    yield node, under_list, uncorrelatable
    for child in (node.get("properties") or {}).values():
        yield from _rule_nodes(child, under_list, uncorrelatable)
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        yield from _rule_nodes(additional, True, uncorrelatable)
    items = node.get("items")
    if isinstance(items, dict):
        unmapped = uncorrelatable or node.get("x-kubernetes-list-type") != "map"
        yield from _rule_nodes(items, True, unmapped)


def _cel_change(draw: st.DrawFn, body: dict[str, Any]) -> str:
    """One change of the CRD's CEL rules: an existing rule edited or given another field, a
    rule added to a node not under a list, or oldSelf put under a list's items."""
    versions = body["spec"]["versions"]
    index = draw(st.integers(0, len(versions) - 1))
    nodes = list(_rule_nodes(versions[index]["schema"]["openAPIV3Schema"]))
    ruled = [n for n, _, _ in nodes if n.get("x-kubernetes-validations")]
    single = [n for n, under_list, _ in nodes if not under_list]
    unmapped = [n for n, _, uncorrelatable in nodes if uncorrelatable]
    choices = ["add"] + ["edit", "field"] * bool(ruled) + ["old-self"] * bool(unmapped)
    kind = draw(st.sampled_from(choices))
    at = f"CEL versions[{index}]"
    if kind == "old-self":
        node = draw(st.sampled_from(unmapped))
        rule = draw(st.sampled_from(OLD_SELF_RULES))
        node.setdefault("x-kubernetes-validations", []).append({"rule": rule})
        return f"{at}: {rule!r} under a list's items"
    if kind == "add":
        node = draw(st.sampled_from(single))
        escaped = [e for e in map(escape, node.get("properties") or {}) if e]
        if escaped and draw(st.booleans()):
            rule = draw(st.sampled_from(PROPERTY_RULES)).format(p=draw(st.sampled_from(escaped)))
        else:
            rule = draw(st.sampled_from(SELF_RULES))
        node.setdefault("x-kubernetes-validations", []).append({"rule": rule})
        return f"{at}: added {rule!r}"
    node = draw(st.sampled_from(ruled))
    rules = node["x-kubernetes-validations"]
    position = draw(st.integers(0, len(rules) - 1))
    rule = rules[position]
    if kind == "edit":
        edit = draw(st.sampled_from(sorted(RULE_EDITS)))
        rule["rule"] = RULE_EDITS[edit](str(rule.get("rule") or ""))
        return f"{at}: rule {position} {edit}: {rule['rule']!r}"
    field = draw(st.sampled_from(["messageExpression", "optionalOldSelf", "reason", "fieldPath"]))
    value: Any = draw(
        st.sampled_from(
            {
                "messageExpression": MESSAGE_EXPRESSIONS,
                "optionalOldSelf": [True, False],
                "reason": REASONS,
                "fieldPath": FIELD_PATHS + [f".{p}" for p in sorted(node.get("properties") or {})],
            }[field]
        )
    )
    rule[field] = value
    return f"{at}: rule {position} {field}={value!r}"


# Issue 22 §4: rules whose cost grows with their node's size (quadratic over a list or a map,
# a regular expression over a string), and the bounds that keep it within the budgets.
COSTLY_RULES = {
    "string": ["self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
               "self.split('.').all(p, p.size() < 64)", "self.lowerAscii() == self"],
    "array": ["self.all(x, self.exists_one(y, y == x))", "self.size() < 2 || self[0] != self[1]"],
    "object": ["self.all(k, self.exists(j, j.startsWith(k)))", "self.all(k, k.size() < 64)"],
}  # fmt: skip
BOUNDS = {"string": "maxLength", "array": "maxItems", "object": "maxProperties"}
BOUND_VALUES = [None, 0, 1, 64, 1000, 100_000, 3_000_000]


def _cost_change(draw: st.DrawFn, body: dict[str, Any]) -> str:
    """A bound (maxLength, maxItems, maxProperties) removed or set, on a node carrying a rule
    whose cost grows with it (added here) or below rules that range over it."""
    versions = body["spec"]["versions"]
    index = draw(st.integers(0, len(versions) - 1))
    sized = [
        node
        for node, _, _ in _rule_nodes(versions[index]["schema"]["openAPIV3Schema"])
        if node.get("type") in BOUNDS
        and (node.get("type") != "object" or isinstance(node.get("additionalProperties"), dict))
    ]
    if not sized:
        return "nothing"
    node = draw(st.sampled_from(sized))
    at = f"cost versions[{index}]"
    change = ""
    if draw(st.booleans()):
        rule = draw(st.sampled_from(COSTLY_RULES[node["type"]]))
        node.setdefault("x-kubernetes-validations", []).append({"rule": rule})
        change = f" with {rule!r}"
    bound = BOUNDS[node["type"]]
    value = draw(st.sampled_from(BOUND_VALUES))
    if value is None:
        node.pop(bound, None)
        return f"{at}: {bound} removed{change}"
    node[bound] = value
    return f"{at}: {bound}={value}{change}"


def apiserver_refusal(cluster: Cluster, body: dict[str, Any]) -> str | None:
    """The apiserver's message when it refuses to create body (dry run), else None."""
    for attempt in range(2):
        try:
            cluster.admin.create(CRDS, body, dryRun="All")
        except KubeError as error:
            if error.code >= 500:
                raise
            return error.message
        except urllib3.exceptions.ProtocolError:
            # Once: a kept-alive connection the server closed. Twice: the apiserver panicked
            # on this CRD (v1.35.4 does on a non-structural schema with selectableFields, in
            # cel.ValidFieldPath) and dropped the connection: nothing was created.
            if attempt:
                return "the apiserver panicked and closed the connection"
            continue
        return None
    raise AssertionError("unreachable")


def diff_exit(
    tmp_path: Path, old: dict[str, Any], new: dict[str, Any], minor: str = NEWEST_MINOR
) -> tuple[int, str]:
    """``diff``'s exit code and last line; an older minor is named with --kube-version."""
    paths = []
    for side, body in (("old", old), ("new", new)):
        path = tmp_path / f"{side}.json"
        path.write_text(json.dumps(body))
        paths.append(str(path))
    version = [] if minor == NEWEST_MINOR else ["--kube-version", minor]
    result = CliRunner().invoke(app, ["diff", *paths, "--output", "json", *version])
    return result.exit_code, result.output.strip().splitlines()[-1] if result.output else ""


def _without_rules(node: Any, root: bool = False) -> Any:
    """A schema with its CEL rules taken out where a schema may hold them: not in allOf,
    anyOf, oneOf or not, nor in the root's metadata, where the apiserver refuses them as it
    refuses any keyword that is not structural there."""
    if not isinstance(node, dict):
        return node
    kept = {key: value for key, value in node.items() if key != "x-kubernetes-validations"}
    if isinstance(node.get("properties"), dict):
        kept["properties"] = {
            key: child if root and key == "metadata" else _without_rules(child)
            for key, child in node["properties"].items()
        }
    for keyword in ("items", "additionalProperties"):
        if keyword in node:
            kept[keyword] = _without_rules(node[keyword])
    return kept


def as_stored(cluster: Cluster, body: dict[str, Any], refused: str | None) -> str | None:
    """The apiserver's refusal of body as the old side of a diff, which it holds: it
    compiles and costs the rules of the CRD it is given, never again those of one it holds
    (load/crd_validation.check), so its refusal of body without them. What it cannot
    decode it could never have held."""
    if refused is None or "cannot unmarshal" in refused:
        return refused
    stripped = copy.deepcopy(body)
    for version in stripped["spec"].get("versions") or []:
        schema = (version or {}).get("schema")
        if isinstance(schema, dict) and "openAPIV3Schema" in schema:
            schema["openAPIV3Schema"] = _without_rules(schema["openAPIV3Schema"], root=True)
    return apiserver_refusal(cluster, stripped)


def disagreement(
    cluster: Cluster,
    tmp_path: Path,
    base: dict[str, Any],
    mutated: dict[str, Any],
    side_new: bool,
    minor: str = NEWEST_MINOR,
) -> str | None:
    """What the apiserver (of ``minor``) and the tool said, when they disagree (or the tool
    broke)."""
    return _compared(
        cluster, apiserver_refusal(cluster, mutated), tmp_path, base, mutated, side_new, minor
    )


def _compared(
    cluster: Cluster,
    refused: str | None,
    tmp_path: Path,
    base: dict[str, Any],
    mutated: dict[str, Any],
    side_new: bool,
    minor: str = NEWEST_MINOR,
) -> str | None:
    """``refused``: the apiserver's refusal of mutated as a new CRD."""
    if not side_new:
        refused = as_stored(cluster, mutated, refused)
    old, new = (base, mutated) if side_new else (mutated, base)
    code, said = diff_exit(tmp_path, old, new, minor)
    if code != 4 and (code == 2) == (refused is not None):
        return None
    if refused and len(refused) > 400:  # it can quote a whole schema
        refused = f"{refused[:150]} … {refused[-250:]}"
    return f"apiserver: {refused or 'accepted'}\n  upgrade-guard exit {code}: {said}"


@pytest.fixture(scope="module")
def bases(cluster: Cluster) -> list[dict[str, Any]]:
    loaded = _load_bases()
    for body in loaded:
        assert apiserver_refusal(cluster, body) is None, body["metadata"]["name"]
    return loaded


@pytest.mark.parametrize("minor", MINORS)
def test_mutated_corpus_crds_exit_2_exactly_when_the_apiserver_refuses(
    cluster_at: Callable[[str], Cluster], bases: list[dict[str, Any]], tmp_path: Path, minor: str
) -> None:
    cluster = cluster_at(minor)
    checked: list[str] = []
    refusals = Counter[str]()
    disagreements: dict[str, str] = {}

    @seed(20261130)
    @settings(
        max_examples=MUTATIONS,
        deadline=None,
        derandomize=False,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=mutations(bases), side_new=st.booleans())
    def check(case: Case, side_new: bool) -> None:
        base, mutated, what = case
        checked.append(what)
        refused = apiserver_refusal(cluster, mutated)
        kind = what.split()[0] if what.startswith(("CEL", "cost")) else "other"
        refusals[f"{kind} {'refused' if refused else 'accepted'}"] += 1
        found = _compared(cluster, refused, tmp_path, base, mutated, side_new, minor)
        if found is not None:
            disagreements.setdefault(found, f"{base['metadata']['name']}: {what}")

    check()
    print(
        f"\n{len(checked)} mutations of {len(bases)} corpus CRDs checked against the {minor}"
        " apiserver:"
        f" {dict(sorted(refusals.items()))}"
    )
    assert not disagreements, "\n".join(f"{what}\n  {said}" for said, what in disagreements.items())


# Disagreements found by the search (and by hand), kept as rows: (id, CRD-building edit).
def _field(node: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        root = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        root["properties"]["spec"] = {"type": "object", "properties": {"f": node}}

    return edit


def _default(node: dict[str, Any], value: Any) -> Callable[[dict[str, Any]], None]:
    return _field({**node, "default": value})


def _root(node: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        body["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = node

    return edit


def _with_status(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def both(body: dict[str, Any]) -> None:
        edit(body)
        body["spec"]["versions"][0]["subresources"] = {"status": {}}

    return both


def _selectable_with_root_ref(body: dict[str, Any]) -> None:
    version = body["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"a": S}}},
        "$ref": "#/definitions/x",
    }
    version["selectableFields"] = [{"jsonPath": ".spec.a"}]


def _selectable(node: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        _field(node)(body)
        body["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.f"}]

    return edit


LIST_MAP_ITEM = {"type": "object", "properties": {"k": S}, "required": ["k"]}
BAD_DEFAULT_BELOW = {"type": "object", "properties": {"a": {"type": "string", "default": 5}}}
OBJECT_WITH_A = {"type": "object", "properties": {"a": {"type": "string"}}}
# A subtree that passed is not walked again where it comes back in the same context
# (crd_validation.Passed). The same subtree, walked first where it passes (the last property
# is walked first), is checked again where it does not: under properties, where defaults
# count, and in a junctor, where types are forbidden. Rows: (id, the holder walked last,
# the holder walked first, refused).
REPEATED_SUBTREES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("passed under additionalProperties, refused under properties",
     {"type": "object", "properties": {"x": BAD_DEFAULT_BELOW}},
     {"type": "object", "additionalProperties": BAD_DEFAULT_BELOW}, True),
    ("passed under additionalProperties and there again",
     {"type": "object", "additionalProperties": BAD_DEFAULT_BELOW},
     {"type": "object", "additionalProperties": BAD_DEFAULT_BELOW}, False),
    ("passed as a property, refused in anyOf",
     {"type": "object", "anyOf": [OBJECT_WITH_A]},
     {"type": "object", "properties": {"x": OBJECT_WITH_A}}, True),
    ("passed as a property and as another",
     {"type": "object", "properties": {"y": OBJECT_WITH_A}},
     {"type": "object", "properties": {"x": OBJECT_WITH_A}}, False),
]  # fmt: skip
# Issue 22 §4: a spec declaring every kind of value CEL types, and its rules. Lists and maps
# are bounded so that no row's verdict is the apiserver's cost estimate.
TYPED_SPEC: dict[str, Any] = {
    "f": S,
    "n": {"type": "integer"},
    "d": {"type": "number"},
    "p": {"x-kubernetes-int-or-string": True},
    "t": {"type": "string", "format": "date-time"},
    "m": {"type": "object", "additionalProperties": S, "maxProperties": 5},
    "my-f": S,
    "ll": {"type": "array", "maxItems": 5, "items": {"type": "array", "maxItems": 5, "items": S}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "u": {"x-kubernetes-preserve-unknown-fields": True},
    "e": {"type": "object", "x-kubernetes-embedded-resource": True,
          "x-kubernetes-preserve-unknown-fields": True},
}  # fmt: skip


def _rule(rule: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    """spec: TYPED_SPEC holding one rule (with the rule's other fields)."""
    return _field_rules(TYPED_SPEC, {"rule": rule, **fields})


def _field_rules(
    properties: dict[str, Any], *rules: dict[str, Any]
) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        root = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        spec = {"type": "object", "properties": copy.deepcopy(properties)}
        root["properties"]["spec"] = {**spec, "x-kubernetes-validations": list(rules)}

    return edit


def _root_rule(rule: str) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        root = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        root["properties"]["spec"] = {"type": "object", "properties": {"f": S}}
        root["x-kubernetes-validations"] = [{"rule": rule}]

    return edit


def _ruled(node: dict[str, Any], rule: str) -> dict[str, Any]:
    return {**node, "x-kubernetes-validations": [{"rule": rule}]}


def _embedded_with_meta(*names: str) -> dict[str, Any]:
    """An embedded resource declaring kind, apiVersion and metadata with ``names`` and labels."""
    meta = {name: S for name in names}
    labels = {"type": "object", "additionalProperties": S, "maxProperties": 5}
    return {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {
            "kind": S,
            "apiVersion": S,
            "metadata": {"type": "object", "properties": {**meta, "labels": labels}},
        },
    }


KEYED_ITEM = {"type": "object", "properties": {"k": {**S, "maxLength": 10}}, "required": ["k"]}
OLD_K = "self.k == oldSelf.k"
REGRESSIONS: list[tuple[str, Callable[[dict[str, Any]], None], bool]] = [
    # (id, edit of a minimal CRD, whether the apiserver refuses it)
    ("int-or-string branches may name integer and string", _field(
        {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, S]}), False),
    ("other junctor branches may not name a type", _field(
        {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "boolean"}, S]}), True),
    ("a flag group mid-pattern is Go syntax", _field({"type": "string", "pattern": "a(?i)b"}),
     False),
    ("an unclosed group is no pattern", _field({"type": "string", "pattern": "("}), True),
    ("a lookahead is not Go syntax", _field({"type": "string", "pattern": "(?=a)"}), True),
    ("a set of arrays needs no atomic items", _field(
        {"type": "array", "items": {"type": "array", "items": S},
         "x-kubernetes-list-type": "set"}), False),
    ("a set of objects needs atomic items", _field(
        {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "set"}), True),
    ("a root default needs apiVersion and kind", _root({"type": "object", "default": {}}),
     True),
    ("a list-map key needs a default or required", _field(
        {"type": "array", "items": {"type": "object", "properties": {"k": S}},
         "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}), True),
    ("a list-map key that is required", _field(
        {"type": "array", "items": LIST_MAP_ITEM, "x-kubernetes-list-type": "map",
         "x-kubernetes-list-map-keys": ["k"]}), False),
    ("maxLength must be an integer", _field({"type": "string", "maxLength": 1.5}), True),
    ("a negative maxLength is accepted", _field({"type": "string", "maxLength": -1}), False),
    ("an unknown format is accepted", _field({"type": "string", "format": "bogus"}), False),
    ("a default of the wrong type", _field({"type": "string", "default": 5}), True),
    ("$ref at the root with selectableFields: the apiserver panics", _selectable_with_root_ref,
     True),
    ("metadata may not even have a description", _root(
        {"type": "object", "properties": {"metadata": {"type": "object", "description": "x"}}}),
     True),
    ("metadata may have an empty enum (not specified, to Go)", _root(
        {"type": "object", "properties": {"metadata": {"type": "object", "enum": []}}}),
     False),
    ("but no maximum, even 0", _root(
        {"type": "object", "properties": {"metadata": {"type": "object", "maximum": 0}}}),
     True),
    ("with a status subresource the root has not even an empty enum", _with_status(_root(
        {"type": "object", "properties": {"a": S}, "enum": []})), True),
    ("an int-or-string branch with empty list-map keys is no pattern", _field(
        {"x-kubernetes-int-or-string": True,
         "anyOf": [{"type": "integer", "x-kubernetes-list-map-keys": []}, S]}), True),
    ("with a status subresource the root has no anyOf", _with_status(_root(
        {"type": "object", "properties": {"a": S}, "anyOf": [{"required": ["a"]}]})), True),
    ("without one it may", _root(
        {"type": "object", "properties": {"a": S}, "anyOf": [{"required": ["a"]}]}), False),
    ("root junctor properties must be root properties", _root(
        {"type": "object", "anyOf": [{"properties": {"b": {"maxLength": 3}}}]}), True),
    ("elsewhere they need not", _field(
        {"type": "object", "anyOf": [{"properties": {"b": {"maxLength": 3}}}]}), False),
    ("a typed int-or-string node has untyped branches", _field(
        {"type": "string", "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}]}),
     True),
    ("additionalProperties at the root", _root(
        {"type": "object", "additionalProperties": True}), True),
    ("a root default may hold apiVersion and kind", _root(
        {"type": "object", "default": {"apiVersion": "a", "kind": "b"}}), False),
    ("items that are no schema decode as none", _field({"type": "object", "items": 5}), False),
    ("a repeat count RE2 refuses", _field({"type": "string", "pattern": "a{2,1}"}), True),
    ("more than 1000 repeats", _field({"type": "string", "pattern": "a{1001}"}), True),
    ("\\Z is Python's, not Go's", _field({"type": "string", "pattern": "a\\Z"}), True),
    ("the int-or-string pattern ignores keywords at their zero value", _field(
        {"x-kubernetes-int-or-string": True,
         "anyOf": [{"type": "integer"},
                   {"type": "string", "x-kubernetes-embedded-resource": False}]}),
     False),
    ("a selectable field must be a scalar", _selectable({"type": "object"}), True),
    ("a selectable field may be an integer", _selectable({"type": "integer"}), False),
    ("int-or-string does not preserve unknown fields", _field(
        {"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}),
     True),
    ("a default under additionalProperties is not validated", _field(
        {"type": "object", "additionalProperties": {"type": "string", "default": ["a"]}}),
     False),
    ("nor one below it", _field(
        {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"a": {"type": "string", "default": 5}}}}),
     False),
    ("a default with unknown fields", _field(
        {"type": "object", "properties": {"a": S}, "default": {"b": 1}}), True),
    # Subtrees that come back (REPEATED_SUBTREES), three levels down, and two levels down,
    # where a subtree of a few subschemas is keyed too (crd_validation._keyed).
    *[
        (key, _field({"type": "object", "properties": {"p": last, "m": first}}), refused)
        for key, last, first, refused in REPEATED_SUBTREES
    ],
    *[
        (f"two levels down: {key}",
         _root({"type": "object", "properties": {"spec": last, "m": first}}), refused)
        for key, last, first, refused in REPEATED_SUBTREES
    ],
    # Where a schema keeps unknown fields, what it can hold without a schema (issue 22 §1):
    # an array always declares its items, an embedded resource that keeps nothing declares
    # properties; an untyped node that keeps unknown fields may declare items.
    ("a typed array keeping unknown fields still needs items", _field(
        {"type": "array", "x-kubernetes-preserve-unknown-fields": True}), True),
    ("an untyped node keeping unknown fields may declare items", _field(
        {"items": S, "x-kubernetes-preserve-unknown-fields": True}), False),
    ("an embedded resource keeping nothing declares properties", _field(
        {"type": "object", "x-kubernetes-embedded-resource": True}), True),
    # Issue 22 §2: defaults hold the apiserver's value semantics (validation/values.py and
    # validation/regexes.py, shared with the validator of stored objects).
    ("RE2's $ does not match before a final newline", _default(
        {"type": "string", "pattern": "^abc$"}, "abc\n"), True),
    ("the same text without it matches", _default(
        {"type": "string", "pattern": "^abc$"}, "abc"), False),
    ("with the m flag $ matches at a line end", _default(
        {"type": "string", "pattern": "(?m)^a$"}, "a\n"), False),
    ("\\d is ASCII in RE2", _default({"type": "string", "pattern": "^\\d$"}, "\u0663"), True),
    ("\\s has no vertical tab in RE2", _default(
        {"type": "string", "pattern": "^\\s$"}, "\v"), True),
    ("(?i) folds Unicode in RE2", _default(
        {"type": "string", "pattern": "^(?i)k$"}, "\u212a"), False),
    ("a brace that starts no repeat is literal", _default(
        {"type": "string", "pattern": "^a{,3}$"}, "a{,3}"), False),
    ("so a{,3} is no repeat", _default(
        {"type": "string", "pattern": "^a{,3}$"}, "aa"), True),
    ("a flag group mid-pattern holds to the end of its group", _default(
        {"type": "string", "pattern": "^a(?i)bc$"}, "aBC"), False),
    ("a possessive repeat is Python's, not Go's", _field(
        {"type": "string", "pattern": "^a*+$"}), True),
    ("0.3 is a multiple of 0.1 (kube-openapi multiplies by 1/0.1)", _default(
        {"type": "number", "multipleOf": 0.1}, 0.3), False),
    ("so are 0.7", _default({"type": "number", "multipleOf": 0.1}, 0.7), False),
    ("and 0.30000000000000004", _default(
        {"type": "number", "multipleOf": 0.1}, 0.30000000000000004), False),
    ("but not -0.30000000000000004 (below zero only exact)", _default(
        {"type": "number", "multipleOf": 0.1}, -0.30000000000000004), True),
    ("nor 0.35", _default({"type": "number", "multipleOf": 0.1}, 0.35), True),
    ("no integer is a multiple of 0.5 (the factor is cut to 0)", _default(
        {"type": "number", "multipleOf": 0.5}, 3), True),
    ("the number 3.0 is", _default({"type": "number", "multipleOf": 0.5}, 3.0), False),
    ("for an integer, 2.5 is cut to 2: 4 is a multiple", _default(
        {"type": "number", "multipleOf": 2.5}, 4), False),
    ("5 is not", _default({"type": "number", "multipleOf": 2.5}, 5), True),
    ("an integer multipleOf", _default({"type": "integer", "multipleOf": 3}, 9), False),
    ("an integer that is no multiple", _default({"type": "integer", "multipleOf": 3}, 10),
     True),
    ("multipleOf 0 refuses every number", _default(
        {"type": "number", "multipleOf": 0}, 1.5), True),
    ("for an integer the bound is cut: 2 is not below an exclusive 2.5", _default(
        {"type": "number", "maximum": 2.5, "exclusiveMaximum": True}, 2), True),
    ("the number 2.0 is", _default(
        {"type": "number", "maximum": 2.5, "exclusiveMaximum": True}, 2.0), False),
    ("1 is not below a minimum of 1.5 (cut to 1)", _default(
        {"type": "number", "minimum": 1.5}, 1), False),
    ("the number 1.0 is", _default({"type": "number", "minimum": 1.5}, 1.0), True),
    ("1.5 is in the enum [1] (converted to int64)", _default(
        {"type": "number", "enum": [1]}, 1.5), False),
    ("2.5 is not", _default({"type": "number", "enum": [1]}, 2.5), True),
    ("1 is not in the enum [1.5]", _default({"type": "number", "enum": [1.5]}, 1), True),
    ("1 is in the enum [1.0]", _default({"type": "number", "enum": [1.0]}, 1), False),
    ("inside an object 1.0 is not 1 (DeepEqual)", _default(
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "enum": [{"a": 1}]},
        {"a": 1.0}), True),
    ("97 is in the enum [a] of an int-or-string (a code point)", _default(
        {"x-kubernetes-int-or-string": True, "enum": ["a"]}, 97), False),
    ("98 is not", _default({"x-kubernetes-int-or-string": True, "enum": ["a"]}, 98), True),
    ("an int-or-string default has no type", _default(
        {"x-kubernetes-int-or-string": True}, True), False),
    ("but its format is kept, unknown or not", _default(
        {"x-kubernetes-int-or-string": True, "format": "int32"}, 5), True),
    ("a float within 1e-9 of an integer is an integer", _default(
        {"type": "integer"}, 3.0000000001), False),
    ("but not beyond 2^53", _default({"type": "integer"}, 1e16), True),
    ("a default must have its format", _default(
        {"type": "string", "format": "date"}, "x"), True),
    ("a date is a date", _default({"type": "string", "format": "date"}, "2024-01-01"), False),
    ("a default lacking a required field", _default(
        {"type": "object", "properties": {"a": S}, "required": ["a"]}, {}), True),
    ("a default holding it", _default(
        {"type": "object", "properties": {"a": S}, "required": ["a"]}, {"a": "x"}), False),
    ("a default failing its anyOf", _default(
        {"type": "object", "properties": {"a": S, "b": S}, "anyOf": [{"required": ["b"]}]},
        {"a": "x"}), True),
    ("a default passing it", _default(
        {"type": "object", "properties": {"a": S, "b": S}, "anyOf": [{"required": ["b"]}]},
        {"b": "x"}), False),
    # Issue 22 §4: rules compiled against the schema's types (validation/cel_compile.py).
    ("a rule over a declared field compiles", _rule("self.f == 'a'"), False),
    ("a rule over an undeclared field does not", _rule("self.g == 'a'"), True),
    ("a string compared with an int does not", _rule("self.f == 1"), True),
    ("an integer ordered against a double compiles (1.28+)", _rule("self.n > 1.5"), False),
    ("a number compared equal with an int does not", _rule("self.d == 1"), True),
    ("int-or-string is dyn: it compares with both", _rule("self.p == 1 || self.p == 'a'"),
     False),
    ("but it is no bool", _rule("self.p"), True),
    ("a rule that is a string is no bool", _rule("self.f"), True),
    ("date-time is a timestamp", _rule("self.t < timestamp('2020-01-01T00:00:00Z')"), False),
    ("not a string", _rule("self.t < '2020'"), True),
    ("additionalProperties is a map", _rule("self.m.a == 'x'"), False),
    ("of its values' type", _rule("self.m.a == 1"), True),
    ("a property is named escaped", _rule("self.my__dash__f == 'a'"), False),
    ("not as written with _", _rule("self.my_f == 'a'"), True),
    ("an object keeping unknown fields declares none of them", _rule("self.free.x == 1"),
     True),
    ("it is there itself", _rule("has(self.free)"), False),
    ("and may be null", _rule("self.free == null"), False),
    ("a string may not", _rule("self.f == null"), True),
    ("an untyped field keeping unknown fields is no field", _rule("has(self.u)"), True),
    ("a list of lists indexes to its items' type", _rule("self.ll[0][0] == 'a'"), False),
    ("the root has metadata.name and kind", _root_rule(
        "self.metadata.name == 'a' && self.kind == 'Widget'"), False),
    ("but no metadata.labels", _root_rule("self.metadata.labels.size() == 0"), True),
    ("an embedded resource has metadata.name", _rule("self.e.metadata.name == 'a'"), False),
    ("but no undeclared spec", _rule("self.e.spec == 1"), True),
    ("an embedded resource declaring kind, apiVersion, metadata.name and generateName keeps"
     " its metadata's other fields", _field_rules({"e": _ruled(
         _embedded_with_meta("name", "generateName"), "self.metadata.labels.size() >= 0")}),
     False),
    ("one that declares less gets metadata with name and generateName only", _field_rules(
        {"e": _ruled(_embedded_with_meta("name"), "self.metadata.labels.size() >= 0")}), True),
    ("an untyped node has no CEL type for its rules", _field_rules(
        {"u": _ruled({"x-kubernetes-preserve-unknown-fields": True}, "true")}), True),
    ("a typed one keeping unknown fields has", _field_rules(
        {"u": _ruled({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "true")}),
     False),
    ("a two-variable comprehension (1.33+ in a new rule) compiles",
     _rule("self.m.all(k, v, v == 'a')"),
     False),
    ("exists_one with two variables too", _rule("self.m.exists_one(k, v, v == 'a')"), False),
    # cel-go's standard macros have exists_one with one variable, not existsOne.
    ("existsOne with one variable: no minor's macro", _rule("self.m.existsOne(k, k == 'a')"),
     True),
    ("a valid duration literal", _rule("duration('1h30m') > duration('1s')"), False),
    ("an invalid one (1.29+)", _rule("duration('bogus') == duration('1s')"), True),
    ("an invalid timestamp literal", _rule("timestamp('x') == self.t"), True),
    ("a valid regex literal", _rule("self.f.matches('^a+$')"), False),
    ("an invalid one", _rule("self.f.matches('(')"), True),
    ("a messageExpression that is a string", _rule("true", messageExpression="'bad ' + self.f"),
     False),
    ("one that is an int", _rule("true", messageExpression="self.n"), True),
    ("one that does not compile", _rule("true", messageExpression="'x' + self.g"), True),
    # raw literals ending in a backslash, which cel-go reads and cel-cpp misreads
    # (validation/cel_source.py)
    ("a raw string may end in a backslash", _rule("self.f == r'\\'"), False),
    ("its closing quote is no escaped quote", _rule("self.f == r'\\''"), True),
    ("in triple quotes too", _rule("!self.f.endsWith(R'''\\''')"), False),
    ("where a fourth quote is left unclosed", _rule("!self.f.endsWith(R'''\\'''')"), True),
    ("a raw bytes literal, b before r", _rule("size(br'\\\\\\') == 3"), False),
    ("r before b is no prefix", _rule("size(rb'\\\\\\') == 3"), True),
    ("a raw regex literal ending in an escaped backslash", _rule("self.f.matches(r'a\\\\')"),
     False),
    ("one ending in a backslash is no regex", _rule("self.f.matches(r'a\\')"), True),
    ("a raw messageExpression", _rule("true", messageExpression="r'\\' + self.f"), False),
    ("beside an undeclared field", _rule("true", messageExpression="r'\\' + self.g"), True),
    ("a pattern ending in an escaped backslash", _field({"type": "string", "pattern": "a\\\\"}),
     False),
    ("a pattern ending in a backslash is no pattern", _field(
        {"type": "string", "pattern": "a\\"}), True),
    # oldSelf where old and new values cannot be told apart, and optionalOldSelf
    ("oldSelf on an item of a list without a type", _field_rules(
        {"l": {"type": "array", "maxItems": 5, "items": _ruled(KEYED_ITEM, OLD_K)}}), True),
    ("on an item of a map list", _field_rules(
        {"l": {"type": "array", "maxItems": 5, "items": _ruled(KEYED_ITEM, OLD_K),
               "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}}), False),
    ("on an item of a set", _field_rules(
        {"l": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "set",
               "items": _ruled({**S, "maxLength": 10}, "self == oldSelf")}}), True),
    ("a rule without oldSelf there", _field_rules(
        {"l": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "set",
               "items": _ruled({**S, "maxLength": 10}, "self == 'a'")}}), False),
    ("below an item", _field_rules(
        {"l": {"type": "array", "maxItems": 5, "items": {
            "type": "object", "properties": {"x": _ruled(KEYED_ITEM, OLD_K)}}}}), True),
    ("on a value under additionalProperties", _field_rules(
        {"m": {"type": "object", "maxProperties": 5,
               "additionalProperties": _ruled(KEYED_ITEM, OLD_K)}}), False),
    ("inside an atomic map (correlated all the same)", _field_rules(
        {"m": {"type": "object", "x-kubernetes-map-type": "atomic",
               "properties": {"x": _ruled(KEYED_ITEM, OLD_K)}}}), False),
    ("optionalOldSelf with oldSelf", _rule("oldSelf.hasValue()", optionalOldSelf=True), False),
    ("without it", _rule("self.f == 'a'", optionalOldSelf=True), True),
    ("even false without it", _rule("self.f == 'a'", optionalOldSelf=False), True),
    ("oldSelf without optionalOldSelf is no optional", _rule("oldSelf.hasValue()"), True),
    # the rule's other fields
    ("a supported reason", _rule("self.f == 'a'", reason="FieldValueForbidden"), False),
    ("an unsupported one", _rule("self.f == 'a'", reason="Bogus"), True),
    ("a fieldPath to a property", _rule("true", fieldPath=".f"), False),
    ("to a map key", _rule("true", fieldPath=".m.a"), False),
    ("to an undeclared property", _rule("true", fieldPath=".g"), True),
    ("without its dot", _rule("true", fieldPath="f"), True),
    ("indexing a list", _rule("true", fieldPath=".ll[0]"), True),
    ("a rule of blanks", _rule("  "), True),
    ("a message of blanks", _rule("true", message="  "), True),
    ("a message on two lines", _rule("true", message="a\nb"), True),
    ("a rule on two lines with a message", _rule("true &&\ntrue", message="m"), False),
    ("without one", _rule("true &&\ntrue"), True),
    # Issue 38: libraries by minor (ON_OLDEST holds the oldest minor's answer).
    ("isSemver, a 1.33 library, on a new rule", _rule("isSemver(self.f)"), False),
]  # fmt: skip


def _minimal_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {}}},
                }
            ],
        },
    }


class ModelDisagrees(AssertionError):
    """``diff`` disagrees with an apiserver that answered as its row says."""


# REGRESSIONS rows the oldest minor's apiserver answers otherwise: row id -> refused there.
ON_OLDEST: dict[str, bool] = {
    # A new rule compiles at the compatibility version, one minor behind the server's (1.31
    # on 1.32): a library is usable in new rules the minor after it came.
    "isSemver, a 1.33 library, on a new rule": True,
    "a two-variable comprehension (1.33+ in a new rule) compiles": True,
    "exists_one with two variables too": True,
}


def _regressions() -> Iterator[Any]:
    for minor in MINORS:
        for key, edit, refused in REGRESSIONS:
            if minor == NEWEST_MINOR:
                yield pytest.param(minor, edit, refused, id=key)
                continue
            yield pytest.param(minor, edit, ON_OLDEST.get(key, refused), id=f"{key} @{minor}")


@pytest.mark.parametrize(("minor", "edit", "refused"), list(_regressions()))
def test_regression_row(
    cluster_at: Callable[[str], Cluster],
    tmp_path: Path,
    minor: str,
    edit: Callable[[dict[str, Any]], None],
    refused: bool,
) -> None:
    cluster = cluster_at(minor)
    base = _minimal_crd()
    mutated = copy.deepcopy(base)
    edit(mutated)
    assert (apiserver_refusal(cluster, mutated) is not None) is refused, "the apiserver changed"
    for side_new in (True, False):
        found = disagreement(cluster, tmp_path, base, mutated, side_new, minor)
        if found is not None:
            raise ModelDisagrees(found)


# What each minor's apiserver says to a CRD adding isSemver(self), created or updated.
SEMVER_REFUSAL = {
    NEWEST_MINOR: None,
    OLDEST_MINOR: "spec.validation.openAPIV3Schema.properties[spec].properties[f]"
    ".x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{"
    'Rule:"isSemver(self)", Message:"", MessageExpression:"", Reason:'
    '(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}:'
    " compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver'"
    " (in container '')\n | isSemver(self)\n | ........^",
}


@pytest.mark.parametrize("minor", MINORS)
def test_a_semver_rule_on_a_string_field(cluster_at: Callable[[str], Cluster], minor: str) -> None:
    """``isSemver(self)`` on a string field: the semver library came in 1.33, whose new rules
    still compile at 1.32's compatibility version, so a 1.32 apiserver refuses the CRD adding
    it, created or updated, and 1.35 accepts both. (``diff`` on the same pair: the row
    "isSemver, a 1.33 library, on a new rule".)"""
    cluster = cluster_at(minor)
    plural = f"semvers{secrets.token_hex(3)}"
    without = _minimal_crd()
    without["metadata"]["name"] = f"{plural}.example.com"
    without["spec"]["names"] = {"plural": plural, "kind": "Semver"}
    _field({"type": "string", "maxLength": 64})(without)
    with_rule = copy.deepcopy(without)
    schema = with_rule["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["f"]["x-kubernetes-validations"] = [
        {"rule": "isSemver(self)"}
    ]
    on_create = apiserver_refusal(cluster, with_rule)
    cluster.admin.create(CRDS, without)
    try:
        # A merge patch: the apiserver writes the CRD's status meanwhile (no revision to race).
        versions = {"spec": {"versions": with_rule["spec"]["versions"]}}
        try:
            cluster.admin.patch(f"{CRDS}/{plural}.example.com", versions, dryRun="All")
            on_update = None
        except KubeError as error:
            on_update = error.message
    finally:
        cluster.admin.delete(f"{CRDS}/{plural}.example.com")
    want = SEMVER_REFUSAL[minor]
    name = f'CustomResourceDefinition.apiextensions.k8s.io "{plural}.example.com" is invalid: '
    assert on_create == (None if want is None else name + want)
    assert on_update == on_create
