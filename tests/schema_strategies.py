"""Hypothesis strategies for CRD schema evolutions and stored objects.

A case is a ``spec`` schema the objects are stored under (``old``), the ``spec`` schema of
the candidate CRD (``new``, ``old`` with one to three edits of the kinds that break stored
objects), the paths the edits touched, and objects drawn from ``old`` (mostly valid, some
not: the apiserver decides which get stored). Schemas stay structural and within the CEL
cost budget, so the apiserver accepts the CRDs; the few it refuses are counted, not judged.
Edits include CEL rules written here and rules taken from ../shared/corpus, each on a copy
of the schema node it was written for, cut down to the properties the rule names.
"""

from __future__ import annotations

import copy
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

JSON = dict[str, Any]
Path = tuple[str, ...]  # property names; "[]" for array items, "*" for map values

NAMES = ("alpha", "beta", "gamma", "delta", "mode", "size", "tags", "items")
WORDS = ("a", "b", "ab", "red", "green", "blue", "Fast", "x-1", "", "zz9", "héllo", "日本", "ab\n")
FORMATS = (
    *("uuid", "date-time", "date", "duration", "byte", "ipv4", "cidr", "hostname"),
    *("email", "uri", "k8s-short-name", "int32", "password"),
)
FORMAT_VALUES = {
    "uuid": (
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "not-a-uuid",
        "0F8FAD5BD9CB469FA16570867728950E",
    ),
    "date-time": (
        "2024-01-02T03:04:05Z",
        "yesterday",
        "2024-01-02T03:04:05",
        "2024-01-02 03:04:05Z",
        "2024-01-02T25:00:00Z",
        "2024-01-02t03:04:05.123+01:00",
    ),
    "date": ("2024-02-28", "2024-02-31", "2024-2-28"),
    "duration": ("1h30m", "3 days", "forever", "1.5h", "-1s", "10 hours", "1d", "5"),
    "byte": ("aGVsbG8=", "!!", "aGVsbG8", ""),
    "ipv4": ("10.0.0.1", "999.1.1.1", "010.0.0.1", "::1", "1.2.3"),
    "cidr": ("10.0.0.0/8", "10.0.0.0/99", "10.0.0.1/8", "::/0", "010.0.0.0/8"),
    "email": ("a@b.c", "no-at", "A <a@b.c>", "a@b", "a b@c.d", "a@b@c"),
    "uri": ("http://x/y", "not a uri", "/path", "mailto:x@y", "x:", "1x:y", "http://a%zz"),
    "k8s-short-name": ("abc", "Not_A_Name", "a-", "a" * 64, "0a"),
    "hostname": ("a.example.com", "-bad_host-", "a_b", "ab", "1.2.3.4", "a..b", "xn--d1a.b"),
}


@dataclass
class Case:
    old: JSON
    new: JSON
    edits: list[tuple[str, Path]]
    objects: list[JSON] = field(default_factory=list)
    alternates: list[JSON] = field(default_factory=list)


# Schemas ------------------------------------------------------------------------------------
def _scalar_schemas() -> st.SearchStrategy[JSON]:
    string_node = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "maxLength": st.integers(1, 6),
            "minLength": st.integers(0, 2),
            "enum": st.lists(st.sampled_from(WORDS[:6]), min_size=1, max_size=3, unique=True),
            "pattern": st.sampled_from(("^[a-z]+$", "^[a-z0-9-]*$", "b", "^[[:alpha:]]+$")),
            "format": st.sampled_from(FORMATS),
            "nullable": st.just(True),
        },
    )
    integer_node = st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={
            "maximum": st.integers(-2, 10),
            "minimum": st.integers(-5, 3),
            "multipleOf": st.integers(2, 3),
            "nullable": st.just(True),
        },
    )
    number_node = st.fixed_dictionaries(
        {"type": st.just("number")},
        optional={"maximum": st.sampled_from((1.5, 10)), "minimum": st.sampled_from((0, -1.5))},
    )
    return st.one_of(
        string_node,
        integer_node,
        number_node,
        st.just({"type": "boolean"}),
        st.just({"x-kubernetes-int-or-string": True}),
    )


def _object(children: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    @st.composite
    def build(draw: st.DrawFn) -> JSON:
        names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
        node: JSON = {"type": "object", "properties": {n: draw(children) for n in names}}
        if draw(st.booleans()):
            node["required"] = draw(st.lists(st.sampled_from(names), max_size=1, unique=True))
            if not node["required"]:
                del node["required"]
        if draw(st.integers(0, 5)) == 0:
            node["x-kubernetes-preserve-unknown-fields"] = True
        return node

    return build()


def _map(children: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    return st.builds(
        lambda v, most: {"type": "object", "additionalProperties": v, **most},
        children,
        st.sampled_from(({}, {"maxProperties": 2})),
    )


def _array(children: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    @st.composite
    def build(draw: st.DrawFn) -> JSON:
        kind = draw(st.sampled_from(("atomic", "set", "map", "plain")))
        node: JSON = {"type": "array", "maxItems": draw(st.integers(1, 4))}
        if kind == "map":
            node["items"] = {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 5},
                    "port": {"type": "integer"},
                },
                "required": ["name"],
            }
            node["x-kubernetes-list-type"] = "map"
            node["x-kubernetes-list-map-keys"] = ["name"]
        elif kind == "set":
            node["items"] = draw(
                st.sampled_from(({"type": "string", "maxLength": 4}, {"type": "integer"}))
            )
            node["x-kubernetes-list-type"] = "set"
        else:
            node["items"] = draw(children)
            if kind == "atomic":
                node["x-kubernetes-list-type"] = "atomic"
        return node

    return build()


def node_schemas() -> st.SearchStrategy[JSON]:
    return st.recursive(
        _scalar_schemas(),
        lambda children: st.one_of(_object(children), _map(children), _array(children)),
        max_leaves=6,
    )


def spec_schemas() -> st.SearchStrategy[JSON]:
    @st.composite
    def build(draw: st.DrawFn) -> JSON:
        names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
        return {"type": "object", "properties": {n: draw(node_schemas()) for n in names}}

    return build()


# Walking schemas ----------------------------------------------------------------------------
def nodes(schema: JSON, path: Path = ()) -> Iterator[tuple[Path, JSON]]:
    yield path, schema
    for name, child in (schema.get("properties") or {}).items():
        yield from nodes(child, (*path, name))
    if isinstance(schema.get("items"), dict):
        yield from nodes(schema["items"], (*path, "[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], (*path, "*"))


def _is_map_list_item(schema: JSON, path: Path) -> bool:
    """Whether ``path`` is a key property of a map-list item (it must stay required)."""
    if len(path) < 2 or path[-2] != "[]":
        return False
    parent = schema
    for step in path[:-2]:
        if step == "[]":
            parent = parent.get("items") or {}
        elif step == "*":
            parent = parent.get("additionalProperties") or {}
        else:
            parent = (parent.get("properties") or {}).get(step) or {}
    return path[-1] in (parent.get("x-kubernetes-list-map-keys") or [])


def _type_of(node: JSON) -> str:
    if node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    return str(node.get("type", ""))


# Edits --------------------------------------------------------------------------------------
CEL_TEMPLATES: dict[str, tuple[str, ...]] = {
    "string": (
        "self.size() <= 3",
        "self.startsWith('a')",
        "self == oldSelf",
        "!self.contains('-')",
        "self.lowerAscii() == self",
        "self.matches('^[a-z]*$')",
        "isURL(self) || self.size() < 2",
    ),
    "integer": ("self <= 5", "self >= oldSelf", "self % 2 == 0", "self != 3"),
    "number": ("self <= 5.0", "self >= 0.0"),
    "boolean": ("self", "self == oldSelf"),
    "object": ("has(self.{a}) || !has(self.{b})", "self == oldSelf"),
    "array": ("self.size() <= 2", "self.all(x, x == self[0])", "self == oldSelf"),
    "int-or-string": ("type(self) == int", "type(self) == string || self <= 5"),
}


def _edit(draw: st.DrawFn, spec: JSON) -> tuple[str, Path] | None:
    """Apply one edit to ``spec`` in place; return (what, path) or None when none fits."""
    path, node = draw(st.sampled_from(list(nodes(spec))))
    kind = _type_of(node)
    choices: list[str] = []
    if kind == "string":
        choices += ["maxLength", "enum", "pattern", "format", "type", "default", "nullable"]
    elif kind in ("integer", "number"):
        choices += ["maximum", "minimum", "type", "default", "allOf", "nullable"]
        if kind == "integer":
            choices += ["multipleOf", "int-or-string"]
    elif kind == "int-or-string":
        choices += ["type", "nullable"]
    elif kind == "object":
        if node.get("properties"):
            choices += ["required", "remove", "remove", "preserve", "anyOf", "embedded"]
            choices += ["default-child", "default-child", "map-type"]
            if path:
                choices += ["default-object"]
        else:
            choices += ["maxProperties"]
    elif kind == "array":
        choices += ["maxItems", "list-type"]
    # CEL rules in about a third of the edits
    what = draw(st.sampled_from(choices)) if choices and draw(st.integers(0, 2)) else "rule"
    if _is_map_list_item(spec, path) and what in ("type", "nullable", "default", "int-or-string"):
        return None
    if what == "remove" and any(
        _is_map_list_item(spec, (*path, name)) for name in node.get("properties", {})
    ):
        return None
    if what == "maxLength":
        node["maxLength"] = draw(st.integers(0, 3))
        node.pop("minLength", None)
    elif what == "enum":
        node["enum"] = draw(
            st.lists(st.sampled_from(WORDS[:5]), min_size=1, max_size=2, unique=True)
        )
    elif what == "pattern":
        if "pattern" in node and draw(st.booleans()):
            del node["pattern"]
        else:
            node["pattern"] = draw(st.sampled_from(("^[a-z]+$", "^a", "[0-9]", "^[[:alnum:]]*$")))
    elif what == "format":
        node["format"] = draw(st.sampled_from(FORMATS))
    elif what == "type":
        for key in ("maxLength", "minLength", "enum", "pattern", "format", "maximum", "minimum",
                    "multipleOf", "x-kubernetes-int-or-string", "default", "nullable"):  # fmt: skip
            node.pop(key, None)
        node["type"] = draw(st.sampled_from(("string", "integer", "number", "boolean")))
    elif what == "int-or-string":
        node.clear()
        node["x-kubernetes-int-or-string"] = True
    elif what == "nullable":
        if node.get("nullable"):
            del node["nullable"]
        else:
            node["nullable"] = True
    elif what in ("maximum", "minimum"):
        node[what] = draw(st.integers(-2, 6))
        node.pop("exclusiveMaximum" if what == "maximum" else "exclusiveMinimum", None)
        if draw(st.booleans()):
            node["exclusiveMaximum" if what == "maximum" else "exclusiveMinimum"] = True
    elif what == "multipleOf":
        node["multipleOf"] = draw(st.integers(2, 4))
    elif what == "allOf":
        node["allOf"] = [{"maximum": draw(st.integers(0, 5))}]
    elif what == "default":
        node["default"] = draw(values_for(node, valid=True))
        if node["default"] is None:
            del node["default"]
    elif what == "required":
        names = sorted(node["properties"])
        node["required"] = draw(
            st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)
        )
    elif what == "remove":
        name = draw(st.sampled_from(sorted(node["properties"])))
        del node["properties"][name]
        node["required"] = [r for r in node.get("required", []) if r != name]
        if not node["required"]:
            del node["required"]
        if not node["properties"]:
            node["x-kubernetes-preserve-unknown-fields"] = True
        return what, (*path, name)
    elif what == "preserve":
        if node.pop("x-kubernetes-preserve-unknown-fields", None) is None:
            node["x-kubernetes-preserve-unknown-fields"] = True
        node.pop("x-kubernetes-embedded-resource", None)
    elif what == "embedded":
        node["x-kubernetes-preserve-unknown-fields"] = True
        node["x-kubernetes-embedded-resource"] = True
    elif what == "anyOf":
        names = sorted(node["properties"])
        node["anyOf"] = [{"required": [n]} for n in names[:2]]
    elif what == "default-child":
        name = draw(st.sampled_from(sorted(node["properties"])))
        child = node["properties"][name]
        if _type_of(child) in ("string", "integer", "number", "boolean"):
            value = draw(values_for(child, valid=True))
            if value is not None:
                child["default"] = value
                return what, (*path, name)
        return None
    elif what == "map-type":
        if node.pop("x-kubernetes-map-type", None) is None:
            node["x-kubernetes-map-type"] = "atomic"
    elif what == "default-object":
        node["default"] = {}
    elif what == "maxProperties":
        node["maxProperties"] = draw(st.integers(0, 1))
    elif what == "maxItems":
        node["maxItems"] = draw(st.integers(0, 2))
    elif what == "list-type":
        items = node.get("items", {})
        if _type_of(items) in ("string", "integer"):
            node["x-kubernetes-list-type"] = draw(st.sampled_from(("set", "atomic")))
        else:
            return None
    elif what == "rule":
        templates = CEL_TEMPLATES.get(kind)
        if not templates:
            return None
        names = sorted(node.get("properties") or {}) or ["alpha"]
        text = draw(st.sampled_from(templates))
        if "{a}" in text:
            if not node.get("properties"):
                return None
            text = text.format(a=draw(st.sampled_from(names)), b=draw(st.sampled_from(names)))
        rule: JSON = {"rule": text}
        extra = draw(st.sampled_from(("", "message", "messageExpression", "reason")))
        if extra == "message":
            rule["message"] = "must hold"
        elif extra == "messageExpression":
            rule["messageExpression"] = "'must hold'"
        elif extra == "reason":
            rule["reason"] = draw(st.sampled_from(("FieldValueForbidden", "FieldValueRequired")))
        node["x-kubernetes-validations"] = [rule]
        _bound_for_cost(node)
    return what, path


def _bound_for_cost(node: JSON) -> None:
    """Keep the CEL cost estimate of rules on unbounded values under the budget."""
    if node.get("type") == "string":
        node.setdefault("maxLength", 8)
    if node.get("type") == "array":
        node.setdefault("maxItems", 4)
        items = node.get("items", {})
        if items.get("type") == "string":
            items.setdefault("maxLength", 8)
    if node.get("type") == "object" and "additionalProperties" in node:
        node.setdefault("maxProperties", 4)


# Corpus rules -------------------------------------------------------------------------------
@dataclass(frozen=True)
class CorpusRule:
    project: str
    crd: str
    path: str
    node: JSON  # the schema node the rule sits on, cut down to what the rule names


def _cut(node: JSON, words: set[str], keep_rule: JSON | None) -> JSON:
    cut = {k: copy.deepcopy(v) for k, v in node.items()
           if k not in ("properties", "items", "additionalProperties", "x-kubernetes-validations",
                        "required", "description", "allOf", "anyOf", "oneOf", "not")}  # fmt: skip
    if keep_rule is not None:
        cut["x-kubernetes-validations"] = [keep_rule]
    keys = set(node.get("x-kubernetes-list-map-keys") or [])
    props = {
        name: _cut(child, words, None)
        for name, child in (node.get("properties") or {}).items()
        if name in words or name in keys
    }
    if props:
        cut["properties"] = props
        required = [r for r in node.get("required") or [] if r in props]
        if required:
            cut["required"] = required
    elif node.get("properties"):
        cut["properties"] = {}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            cut[key] = _cut(node[key], words, None)
    if keys and isinstance(cut.get("items"), dict):
        item_props = cut["items"].setdefault("properties", {})
        for key in keys:
            item_props.setdefault(key, {"type": "string"})
        cut["items"]["required"] = sorted(keys)
    return cut


def corpus_rules(crds: dict[str, JSON], project: str) -> list[CorpusRule]:
    """Every rule of ``crds`` (name -> raw CRD) with the node it sits on."""
    found: dict[str, CorpusRule] = {}

    def walk(node: JSON, path: str, crd: str) -> None:
        for rule in node.get("x-kubernetes-validations") or []:
            text = str(rule.get("rule", ""))
            if text in found:
                continue
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
            found[text] = CorpusRule(project, crd, path, _cut(node, words, dict(rule)))
        for name, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{name}", crd)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", crd)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}.*", crd)

    for name, crd in crds.items():
        for version in crd["spec"]["versions"]:
            schema = version.get("schema", {}).get("openAPIV3Schema", {})
            spec = (schema.get("properties") or {}).get("spec")
            if isinstance(spec, dict):
                walk(spec, "spec", name)
    return list(found.values())


def _without_rules(node: JSON) -> JSON:
    node = copy.deepcopy(node)
    for _, child in nodes(node):
        child.pop("x-kubernetes-validations", None)
    return node


# Values -------------------------------------------------------------------------------------
def values_for(schema: JSON, valid: bool = False, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for ``schema``: mostly fitting it; with ``valid``, only from the cheap
    always-fitting choices (for defaults)."""
    kind = _type_of(schema)
    if "enum" in schema:
        choices = list(schema["enum"])
        return st.sampled_from(choices) if valid else st.sampled_from([*choices, "other"])
    if kind == "string":
        fmt = schema.get("format")
        if fmt in FORMAT_VALUES:
            pool = FORMAT_VALUES[fmt][:1] if valid else FORMAT_VALUES[fmt]
            return st.sampled_from(pool)
        if valid:
            return st.just("ab"[: schema.get("maxLength", 2)] if "pattern" not in schema else None)
        return st.one_of(st.sampled_from(WORDS), st.text(string.ascii_letters + "-.0", max_size=6))
    if kind == "integer":
        low = schema.get("minimum", -3)
        high = schema.get("maximum", 12)
        if valid:
            return (
                st.just(None)
                if "multipleOf" in schema
                else st.integers(low + 1, max(low + 1, high - 1))
            )
        return st.one_of(st.integers(-4, 14), st.just(4.0))
    if kind == "number":
        return st.just(0.5) if valid else st.sampled_from((0.5, 2.5, -2.5, 7, 12.25, 2.0))
    if kind == "boolean":
        return st.booleans()
    if kind == "int-or-string":
        return st.just(1) if valid else st.one_of(st.integers(-2, 9), st.sampled_from(WORDS))
    if valid or depth > 4:
        return st.just(None)
    if kind == "array":
        items = schema.get("items", {})
        most = schema.get("maxItems", 3) + 1
        return st.lists(values_for(items, depth=depth + 1), max_size=min(most, 4))
    if kind == "object":
        return _object_values(schema, depth)
    return st.just(None)


def _object_values(schema: JSON, depth: int) -> st.SearchStrategy[Any]:
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict) and not props:
        return st.dictionaries(
            st.sampled_from(("k1", "k2", "k3")), values_for(additional, depth=depth + 1), max_size=3
        )

    @st.composite
    def build(draw: st.DrawFn) -> JSON:
        value: JSON = {}
        for name, child in props.items():
            if draw(st.integers(0, 3)) > 0 or name in (schema.get("required") or []):
                value[name] = draw(values_for(child, depth=depth + 1))
        if schema.get("x-kubernetes-preserve-unknown-fields") and draw(st.booleans()):
            value["extra"] = draw(st.sampled_from(("x", 1, {"k": "v"})))
        if schema.get("x-kubernetes-embedded-resource") and draw(st.booleans()):
            value.update(apiVersion="v1", kind="ConfigMap")
            value["metadata"] = draw(
                st.sampled_from(
                    (
                        {"name": "x"},
                        {"name": "x", "bogus": "y"},
                        {"name": "a/b"},
                        {"labels": {"ok": "v", "bad key": "v"}},
                        {"name": "x", "namespace": "Bad_NS"},
                    )
                )
            )
        if draw(st.integers(0, 9)) == 0:
            value[draw(st.sampled_from(NAMES))] = None
        return value

    return build()


# Cases ------------------------------------------------------------------------------------
def cases(corpus: list[CorpusRule], objects: int = 6) -> st.SearchStrategy[Case]:
    @st.composite
    def build(draw: st.DrawFn) -> Case:
        old = draw(spec_schemas())
        new = copy.deepcopy(old)
        edits: list[tuple[str, Path]] = []
        if corpus and draw(st.integers(0, 2)) == 0:
            rule = draw(st.sampled_from(corpus))
            name = "corpus"
            old["properties"][name] = _without_rules(rule.node)
            new["properties"][name] = copy.deepcopy(rule.node)
            edits.append((f"corpus {rule.project} {rule.path}", (name,)))
        for _ in range(draw(st.integers(1, 3))):
            edit = _edit(draw, new)
            if edit is not None:
                edits.append(edit)
        case = Case(old, new, edits)
        case.objects = [draw(values_for(old)) for _ in range(objects)]
        case.alternates = [draw(values_for(new)) for _ in range(objects)]
        return case

    return build()
