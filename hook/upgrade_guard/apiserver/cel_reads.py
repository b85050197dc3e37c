"""Where a version schema's CEL rules are, what each reads of its node, and the node cut
down to that.

:func:`sites` walks the schema once for the rules' nodes, as
``ValidateCustomResourceDefinitionOpenAPISchema`` walks it (compiling and costing share it).

A rule compiles (:mod:`cel_compile`) and costs (:mod:`cel_cost`) the same against any
schema that gives the same types and size bounds to what the rule reaches from ``self``
and ``oldSelf``. What it reaches is read from the parsed expression, conservatively:

- a chain of field selections from ``self``/``oldSelf`` is followed through objects;
- a field only tested by ``has()`` need only exist, whatever its type and name: the test
  is a bool and costs nothing (so it is stood in for by a boolean, and named by its order
  of appearance);
- a value used any other way (compared, passed to a function, indexed, iterated, the
  rule's result) keeps its whole subtree, as does a chain reaching a map, a list, ``dyn``
  or anything not an object;
- an expression that does not parse reads the whole node.

The cut-down node keeps of the objects on the way their kind, and of resource roots
(the root, embedded resources) ``kind``, ``apiVersion`` and ``metadata``, which decide the
type the apiserver gives them.
"""

from __future__ import annotations

import marshal
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from upgrade_guard.schema import ADDITIONAL, ITEMS

from . import cel_cost, cel_templates
from .cel_ast import Expr
from .cel_types import RESOURCE_FIELDS, embedded, escape, has_type, node_type

_ROOTS = ("self", "oldSelf")
_KIND_KEYWORDS = (
    "type",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-preserve-unknown-fields",
)
_PRESENT = {"type": "boolean"}


@dataclass
class Reach:
    """What of a value is read: all of it, or some of its fields (by CEL name); with
    ``present`` alone, only whether it exists."""

    whole: bool = False
    present: bool = False
    fields: dict[str, Reach] = field(default_factory=dict)

    def at(self, path: tuple[str, ...]) -> Reach:
        reach = self
        for name in path:
            reach = reach.fields.setdefault(name, Reach())
        return reach

    def merge(self, other: Reach) -> None:
        self.whole |= other.whole
        self.present |= other.present
        for name, below in other.fields.items():
            self.fields.setdefault(name, Reach()).merge(below)

    @property
    def present_only(self) -> bool:
        return self.present and not self.whole and not self.fields


@dataclass(frozen=True)
class Read:
    """What an ``x-kubernetes-validations`` entry reads (its rule and messageExpression),
    and the expressions' shape: their syntax trees with the fields only tested by
    ``has()`` renamed by :attr:`aliases`. The entry's verdict depends on nothing else but
    the types of what it reads."""

    reach: Reach
    shape: tuple[Any, ...]
    aliases: Mapping[str, str]


def rule_read(rule: Mapping[str, Any]) -> Read:
    """:class:`Read` of an ``x-kubernetes-validations`` entry. Shared: never modified."""
    return _read(str(rule.get("rule") or ""), str(rule.get("messageExpression") or ""))


@lru_cache(maxsize=4096)
def _read(rule: str, message: str) -> Read:
    """Read by template (:mod:`cel_templates`) where there is one: the same as reading
    the texts, parsed once for all the rules of one shape."""
    general = cel_templates.template((rule, message))
    if general is not None:
        found = _template_read(*general.texts)
        if found is not None:
            return found.named(general.names)
    return _read_texts(rule, message)


@dataclass(frozen=True)
class _TemplateRead:
    """A template's :class:`Read`, and where its shape names fields by placeholder:
    (expression, position in its shape, placeholder)."""

    read: Read
    selects: tuple[tuple[int, int, str], ...]

    def named(self, names: Mapping[str, str]) -> Read:
        """The read of the texts whose field names the placeholders stand for."""
        shapes = [list(shape) for shape in self.read.shape]
        for text, at, placeholder in self.selects:
            kind, _, test_only, args, entries = shapes[text][at]
            shapes[text][at] = (kind, names[placeholder], test_only, args, entries)
        return Read(
            _named(self.read.reach, names),
            tuple(tuple(shape) for shape in shapes),
            {names.get(key, key): alias for key, alias in self.read.aliases.items()},
        )


@lru_cache(maxsize=1024)
def _template_read(rule: str, message: str) -> _TemplateRead | None:
    """None where a template does not parse, or holds a placeholder other than as a field
    selected (:func:`cel_templates.fields_only`): its texts are then read as they are."""
    texts = (rule, message)
    trees = [cel_cost.parse(text) for text in texts if text.strip()]
    placeholders = cel_templates.fields_only(filter(None, trees), texts) if all(trees) else None
    if placeholders is None:
        return None
    read = _read_texts(rule, message)
    selects = tuple(
        (text, at, entry[1])
        for text, shape in enumerate(read.shape)
        for at, entry in enumerate(shape)
        if isinstance(entry, tuple)
        and len(entry) == 5
        and entry[0] == "select"
        and entry[1] in placeholders
    )
    return _TemplateRead(read, selects)


def _named(reach: Reach, names: Mapping[str, str]) -> Reach:
    return Reach(
        reach.whole,
        reach.present,
        {names.get(key, key): _named(below, names) for key, below in reach.fields.items()},
    )


def _read_texts(rule: str, message: str) -> Read:
    found = Reach()
    tested: list[tuple[Expr, tuple[str, ...]]] = []
    texts = (rule, message)
    trees = [cel_cost.parse(text) if text.strip() else None for text in texts]
    for text, tree in zip(texts, trees, strict=True):
        if tree is not None:
            _use(tree, frozenset(), found, tested)
        elif text.strip():
            found.whole = True
    aliases: dict[str, str] = {}
    renamed: dict[int, str] = {}
    for e, path in tested:
        if found.at(path).present_only:
            renamed[id(e)] = aliases.setdefault(e.name, f"#{len(aliases)}")
    shape = tuple(
        ("text", text) if tree is None else _shape(tree, renamed)
        for text, tree in zip(texts, trees, strict=True)
    )
    return Read(found, shape, aliases)


def _path(
    e: Expr, bound: frozenset[str], found: Reach, tested: list[tuple[Expr, tuple[str, ...]]]
) -> tuple[str, ...] | None:
    """The schema path ``e`` stands for (from self/oldSelf), else None; what its parts
    read is added to ``found``, its ``has()`` tests of a path to ``tested``."""
    if e.kind == "ident":
        return () if e.name in _ROOTS and e.name not in bound else None
    if e.kind == "select" and e.operand is not None:
        below = _path(e.operand, bound, found, tested)
        if below is None:
            return None
        if e.test_only:
            found.at((*below, e.name)).present = True
            tested.append((e, (*below, e.name)))
            return None
        return (*below, e.name)
    if e.kind == "comprehension":
        inner = bound | {e.iter_var, e.iter_var2, e.accu_var}
        for child in (e.iter_range, e.accu_init):
            _use(child, bound, found, tested)
        for child in (e.loop_condition, e.loop_step, e.result):
            _use(child, inner, found, tested)
        return None
    for child in [e.operand, *e.args, *(part for entry in e.entries for part in entry)]:
        _use(child, bound, found, tested)
    return None


def _use(
    e: Expr | None,
    bound: frozenset[str],
    found: Reach,
    tested: list[tuple[Expr, tuple[str, ...]]],
) -> None:
    """``e`` used as a value: a schema path it stands for is read whole."""
    if e is None:
        return
    path = _path(e, bound, found, tested)
    if path is not None:
        found.at(path).whole = True


def _shape(tree: Expr, renamed: Mapping[int, str]) -> tuple[Any, ...]:
    """Every part of a syntax tree but its node ids, flat (preorder), the ``renamed``
    nodes' names replaced."""
    flat: list[Any] = []
    stack: list[Expr | None] = [tree]
    while stack:
        e = stack.pop()
        if e is None:
            flat.append(None)
            continue
        kind = e.kind
        if kind == "literal":
            flat.append((kind, type(e.value).__name__, e.value))
            continue
        flat.append((kind, renamed.get(id(e), e.name), e.test_only, len(e.args), len(e.entries)))
        if kind == "comprehension":
            flat.append((e.iter_var, e.iter_var2, e.accu_var))
            stack.extend((e.result, e.loop_step, e.loop_condition, e.accu_init, e.iter_range))
            continue
        stack.extend(value for entry in reversed(e.entries) for value in reversed(entry))
        stack.extend(reversed(e.args))
        stack.append(e.operand)
    return tuple(flat)


def cut(
    node: Mapping[str, Any],
    read: Reach,
    resource_root: bool,
    aliases: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``node`` with only what ``read`` reaches of it (see the module's documentation);
    with ``aliases``, the fields only tested by ``has()`` are named by their alias."""
    additional = node.get("additionalProperties")
    if (
        read.whole
        or node.get("x-kubernetes-int-or-string") is True
        or node_type(node, resource_root) != "object"
        or isinstance(additional, dict)
    ):
        return dict(node)
    properties = node.get("properties") or {}
    kept: dict[str, Any] = {}
    if resource_root:
        for field_name in RESOURCE_FIELDS:
            if isinstance(properties.get(field_name), dict):
                kept[field_name] = properties[field_name]
    for cel_name, below in read.fields.items():
        name = _property(properties, cel_name)
        if name is None or name in kept:
            continue
        child = properties[name]
        if not below.present_only:
            kept[name] = cut(child, below, embedded(child), aliases)
        else:
            key = name if aliases is None else aliases[cel_name]
            kept[key] = _PRESENT if has_type(child) else child
    shape = {key: node[key] for key in _KIND_KEYWORDS if key in node}
    return {**shape, "properties": kept}


def _property(properties: Mapping[str, Any], cel_name: str) -> str | None:
    """The property CEL names ``cel_name``, if it is a schema node."""
    if isinstance(properties.get(cel_name), dict) and escape(cel_name) == cel_name:
        return cel_name
    for name, child in properties.items():
        if isinstance(child, dict) and escape(name) == cel_name:
            return name
    return None


# The nodes holding rules -----------------------------------------------------------------------
@dataclass(frozen=True)
class Site:
    """A schema node holding rules."""

    parts: tuple[str, ...]
    """Where: property names, ``schema.ITEMS``, ``schema.ADDITIONAL``."""
    node: Mapping[str, Any]
    rules: list[Any]
    resource_root: bool
    """The schema's root or an embedded resource (typed with kind, apiVersion, metadata)."""
    uncorrelatable: tuple[str, ...] | None
    """The nearest list above whose items oldSelf cannot be matched to (not a list-map)."""
    cardinality: int | None
    """The most times the node occurs in an object; None where unbounded."""


_RULES_KEY = b"x-kubernetes-validations"


def _may_hold_rules(node: Any) -> bool:
    """Whether rules may be somewhere in a subtree: told in C from its serialization, far
    quicker than walking a large subtree without any."""
    try:
        return _RULES_KEY in marshal.dumps(node)
    except ValueError:  # a value marshal cannot write: walk it
        return True


def sites(
    root: Mapping[str, Any],
    holding: Collection[tuple[str, ...]] | None = None,
    unwalked: Collection[tuple[str, ...]] = (),
) -> list[Site]:
    """The nodes of a version's schema holding rules, in the apiserver's walking order
    (properties, additionalProperties, items; depth first). Schema nodes are dicts, as the
    CRD checks require.

    With ``holding``, the nodes where a walk of the whole schema but the subtrees
    ``unwalked`` found rules (paths of property names as strings, ``schema.ITEMS``,
    ``schema.ADDITIONAL``; a name spelled alike only makes the walk look further), only the
    ways to those nodes and into those subtrees are walked. Without, and inside those
    subtrees, all is walked, but subtrees two levels down only where their serialization
    holds rules (where a large schema's bulk is, and its rules are not)."""
    # The names that lead on from each way (spelled as strings) toward those places.
    onward: dict[tuple[str, ...], set[str]] = {}
    for place in (*(holding or ()), *unwalked):
        for depth in range(len(place)):
            onward.setdefault(place[:depth], set()).add(place[depth])
    starts = set(unwalked)
    found: list[Site] = []
    stack: list[tuple[tuple[Any, ...], Mapping[str, Any], bool, Any, int | None, bool]] = [
        ((), root, True, None, 1, holding is None or () in starts)
    ]
    while stack:
        parts, node, resource_root, uncorrelatable, cardinality, whole = stack.pop()
        rules = node.get("x-kubernetes-validations")
        if isinstance(rules, list) and rules:
            found.append(Site(parts, node, rules, resource_root, uncorrelatable, cardinality))
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        items = node.get("items")
        if not (properties or additional or items):
            continue
        if whole:
            if len(parts) == 2 and not _may_hold_rules(node):
                continue
            names = None
        else:
            names = onward.get(tuple(map(str, parts)))
            if not names:
                continue
        below = None if cardinality is None else cel_cost.below(node, cardinality)
        children: list[tuple[tuple[Any, ...], Mapping[str, Any], bool, Any, int | None, bool]] = []
        if isinstance(properties, dict):
            children.extend(
                ((*parts, name), child, embedded(child), uncorrelatable, below, whole)
                for name, child in properties.items()
                if isinstance(child, dict) and (names is None or str(name) in names)
            )
        if isinstance(additional, dict) and (names is None or ADDITIONAL in names):
            children.append(
                (
                    (*parts, ADDITIONAL),
                    additional,
                    embedded(additional),
                    uncorrelatable,
                    below,
                    whole,
                )
            )
        if isinstance(items, dict) and (names is None or ITEMS in names):
            list_above = uncorrelatable
            if list_above is None and node.get("x-kubernetes-list-type") != "map":
                list_above = parts
            children.append(((*parts, ITEMS), items, embedded(items), list_above, below, whole))
        if names is not None:
            children = [(*child[:5], tuple(map(str, child[0])) in starts) for child in children]
        stack.extend(reversed(children))
    return found


# Rules the old schema's objects cannot fail ----------------------------------------------------
_UNKNOWN = object()
_COMPARISONS = {
    "_<_": lambda a, b: a < b,
    "_<=_": lambda a, b: a <= b,
    "_>_": lambda a, b: a > b,
    "_>=_": lambda a, b: a >= b,
    "_==_": lambda a, b: a == b,
    "_!=_": lambda a, b: a != b,
}


def same_rule(one: str, other: str) -> bool:
    """Whether two rule texts parse to the same syntax tree (they differ only in quotes,
    spaces or line breaks): the apiserver evaluates them alike."""
    if one == other:
        return True
    first, second = cel_cost.parse(one), cel_cost.parse(other)
    return first is not None and second is not None and _shape(first, {}) == _shape(second, {})


def holds_without(rule: str, node: Mapping[str, Any]) -> bool:
    """Whether ``rule``, at an object node, holds for every value of ``node`` (the old
    schema's): it is true once the fields of ``self`` it tests with ``has()`` that ``node``
    cannot hold are absent (``!has(self.externalId) || ...`` where there is no externalId,
    pruned from every object the old schema stores). False where that is not sure."""
    if node.get("type") != "object" or node.get("x-kubernetes-preserve-unknown-fields"):
        return False
    if node.get("additionalProperties") or node.get("x-kubernetes-embedded-resource"):
        return False
    properties = node.get("properties")
    declared = properties if isinstance(properties, Mapping) else {}
    tree = cel_cost.parse(rule)
    return tree is not None and _partial(tree, declared) is True


def _partial(e: Expr, declared: Mapping[str, Any]) -> Any:
    """``e``'s value where it follows from the absent fields alone, else ``_UNKNOWN``
    (CEL's ``||`` and ``&&`` are true, false, whatever their other side, error included);
    an integer it may not know exactly as the range it is in (``has(self.a) ? 1 : 0``)."""
    if e.kind == "literal":
        return e.value if isinstance(e.value, bool | int) else _UNKNOWN
    if e.kind == "select" and e.test_only:
        direct = e.operand is not None and e.operand.kind == "ident" and e.operand.name == "self"
        known = e.name in RESOURCE_FIELDS or _property(declared, e.name) is not None
        return False if direct and not known else _UNKNOWN
    if e.kind != "call" or e.operand is not None:
        return _UNKNOWN
    args = [_partial(arg, declared) for arg in e.args]
    if e.name == "!_" and isinstance(args[0], bool):
        return not args[0]
    if e.name == "_||_":
        return True if True in args else False if args == [False, False] else _UNKNOWN
    if e.name == "_&&_":
        return False if False in args else True if args == [True, True] else _UNKNOWN
    if e.name == "_?_:_":
        if isinstance(args[0], bool):
            return args[1] if args[0] else args[2]
        ranges = [_range(arg) for arg in args[1:]]
        if None in ranges:
            return _UNKNOWN
        return _Range(min(r.low for r in ranges if r), max(r.high for r in ranges if r))
    if len(args) != 2:
        return _UNKNOWN
    low, high = _range(args[0]), _range(args[1])
    if e.name == "_+_" and low is not None and high is not None:
        return _Range(low.low + high.low, low.high + high.high)
    compare = _COMPARISONS.get(e.name)
    if compare is None or low is None or high is None:
        return _UNKNOWN
    if e.name in ("_==_", "_!=_") and (low.low != low.high or high.low != high.high):
        return _UNKNOWN  # a range's ends alone do not decide equality
    outcomes = {compare(a, b) for a in (low.low, low.high) for b in (high.low, high.high)}
    return outcomes.pop() if len(outcomes) == 1 else _UNKNOWN


@dataclass(frozen=True)
class _Range:
    low: int
    high: int


def _range(value: Any) -> _Range | None:
    if isinstance(value, _Range):
        return value
    return _Range(value, value) if type(value) is int else None
