"""The estimated cost of ``x-kubernetes-validations`` rules, as kube-apiserver v1.35 estimates
it when it validates a CRD (and each older minor of :mod:`minors`, where it differs), and the
limits it refuses a CRD by.

Ported from the sources the apiserver is built from:

- the schema as CEL sees it, with the sizes its nodes can have (:mod:`cel_types`);
- the static estimate (cel-go v0.26.0 ``checker/cost.go``), with Kubernetes' function costs
  (apiserver ``pkg/cel/library/cost.go``) and the sets and lists libraries'; ``has()``
  costs nothing (apiserver ``environment/base.go``);
- the budgets (apiextensions ``pkg/apis/apiextensions/validation``): a rule's cost times
  the most times its node can occur in an object (``maxItems``/``maxProperties`` of the
  nodes above it; where one is unbounded, what fits in a request) must stay within
  10,000,000; all rules and message expressions of a version's schema together within
  100,000,000.

The estimator needs each node's type as the apiserver's type checker gives it. Types come
from the schema for what a rule reads (``self`` and what is reached from it), from literals,
and from the signatures of the functions an expression calls (:data:`_SIGNATURES`). An
expression calling a function not known here is not estimated (None): its cost is not
claimed either way.

The older minors' estimators, where they differ from v1.35's:

- 1.32 (cel-go v0.22.0 ``checker/cost.go``; entry sizes came with v0.23.0, cel-go#1104):
  sizes are known of literals as written, from the schema by path, and of scalars, never of
  a container's entries (an index into a list or map literal, a variable ranging over one,
  what a conditional or ``+`` of literals gives), of a comprehension's accumulator, or through
  ``dyn()``; an optional of a scalar is not a scalar; a comprehension's size is its range's;
  a two-variable comprehension's first variable is sized as the one of a one-variable
  comprehension, its second not at all; and a path the estimator cannot walk from ``self``
  (``{1: 'a'}[1]``: ``@values`` of no path) is walked from its second step, so sizes the
  root (apiextensions ``sizeEstimator``: it drops the first step, taken to be ``self``).
  Kubernetes' function costs (``pkg/cel/library/cost.go``) price ``quantity()``, ``isIP()``
  and the other global parsing functions only where given a receiver, which v0.22 always
  gives (a zero one for a global call): at 1.32 they cost what they cost at 1.35.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Protocol

from . import cel_ast, cel_source, minors
from .cel_ast import Expr
from .cel_types import MAX_REQUEST_BYTES, DeclType, declare, non_negative

PER_EXPRESSION_LIMIT = 10_000_000  # StaticEstimatedCostLimit
PER_CRD_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
_MAX = 2**64 - 1
_TWO_TO_64 = 2.0**64
_STRING_TRAVERSAL = 0.1
_REGEX_LENGTH = 0.25
_ACCUMULATORS = frozenset({"__result__", "@result"})
_HINT = (
    "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where"
    " arrays, maps, and strings are declared)"
)


def budget_message(cost_name: str, cost: int, limit: int) -> str:
    """The apiserver's words (``getCostErrorMessage``)."""
    factor = cost / limit
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return f"{cost_name} exceeds budget by factor of {shown} {_HINT}"


# Saturating uint64 arithmetic, as cel-go's ------------------------------------------------
def _add(x: int, y: int) -> int:
    return min(x + y, _MAX)


def _mul(x: int, y: int) -> int:
    return min(x * y, _MAX)


def _factor(x: int, y: float) -> int:
    fx = float(x)
    if fx > 0 and y > 0 and fx > float(_MAX) / y:
        return _MAX
    ceiling = math.ceil(fx * y)
    return _MAX if ceiling >= _TWO_TO_64 else int(ceiling)


@dataclass(frozen=True)
class Range:
    """A size or cost estimate: cel-go's SizeEstimate and CostEstimate alike."""

    min: int
    max: int

    def add(self, other: Range) -> Range:
        return Range(_add(self.min, other.min), _add(self.max, other.max))

    def multiply(self, other: Range) -> Range:
        return Range(_mul(self.min, other.min), _mul(self.max, other.max))

    def factor(self, per_unit: float) -> Range:
        return Range(_factor(self.min, per_unit), _factor(self.max, per_unit))

    def union(self, other: Range) -> Range:
        return Range(min(self.min, other.min), max(self.max, other.max))


def _fixed(value: int) -> Range:
    return Range(value, value)


_UNKNOWN = Range(0, _MAX)
_ZERO = _fixed(0)
_ONE = _fixed(1)


# Types as the checker gives them ------------------------------------------------------------
@dataclass(frozen=True)
class CelType:
    """A CEL type by cel-go's kinds. Object types of the schema are ``struct`` with a name
    of their own and their declaration in ``decl``."""

    kind: str
    name: str = ""
    params: tuple[CelType, ...] = ()
    decl: DeclType | None = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        inner = ", ".join(map(str, self.params))
        label = self.name or self.kind
        return f"{label}({inner})" if inner else label


def _t(kind: str, *params: CelType, name: str = "") -> CelType:
    return CelType(kind, name, params)


BOOL, INT, UINT, DOUBLE = _t("bool"), _t("int"), _t("uint"), _t("double")
STRING, BYTES, NULL, DYN = _t("string"), _t("bytes"), _t("null"), _t("dyn")
DURATION, TIMESTAMP, TYPE = _t("duration"), _t("timestamp"), _t("type")
_SCALAR_KINDS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})
_NAMED = {
    "Quantity": _t("struct", name="kubernetes.Quantity"),
    "URL": _t("struct", name="kubernetes.URL"),
    "Semver": _t("struct", name="kubernetes.Semver"),
    "Format": _t("struct", name="kubernetes.NamedFormat"),
    "IP": _t("opaque", name="net.IP"),
    "CIDR": _t("opaque", name="net.CIDR"),
}
_UNIT_EQUALITY = frozenset(
    {"net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver"}
)  # Kubernetes' types whose equality costs 1


def _list(elem: CelType) -> CelType:
    return _t("list", elem)


def _optional(inner: CelType) -> CelType:
    return _t("opaque", inner, name="optional_type")


def _is_scalar(t: CelType) -> bool:
    if t.kind in _SCALAR_KINDS:
        return True
    return t.kind == "opaque" and t.name == "optional_type" and _is_scalar(t.params[0])


def _type_of(decl: DeclType) -> CelType:
    """The checker's type of a value declared by ``decl``: an object is a struct of its own."""
    if decl.kind == "object":
        return CelType("struct", f"object{id(decl)}", (), decl)
    if decl.kind in ("list", "map"):
        assert decl.elem is not None
        elem = _type_of(decl.elem)
        return _list(elem) if decl.kind == "list" else _t("map", STRING, elem)
    return _t(decl.kind)


# Function signatures ------------------------------------------------------------------------
# "function overload-id [target.](params) result", types: scalars, A/B (type parameters),
# list(T), map(K,V), optional(T) and the Kubernetes types of _NAMED. Standard CEL
# (cel-go common/stdlib), the strings extension v2, sets, lists v3 (but sortBy), optional
# values and the Kubernetes libraries of v1.35 (apiserver pkg/cel/library).
_COMPARABLE = (
    ("bool", "bool"),
    ("int64", "int"),
    ("uint64", "uint"),
    ("double", "double"),
    ("string", "string"),
    ("bytes", "bytes"),
    ("timestamp", "timestamp"),
    ("duration", "duration"),
)
_NUMERIC = (("int64", "int"), ("uint64", "uint"), ("double", "double"))
# the lists extension's sortable types: (cel-go's type name, kind)
_SORTABLE = (
    ("int", "int"), ("uint", "uint"), ("double", "double"), ("bool", "bool"),
    ("google.protobuf.Duration", "duration"), ("google.protobuf.Timestamp", "timestamp"),
    ("string", "string"), ("bytes", "bytes"),
)  # fmt: skip


def _signature_lines() -> Iterator[str]:
    yield from """
_?_:_ conditional (bool,A,A) A
_&&_ logical_and (bool,bool) bool
_||_ logical_or (bool,bool) bool
!_ logical_not (bool) bool
@not_strictly_false not_strictly_false (bool) bool
_==_ equals (A,A) bool
_!=_ not_equals (A,A) bool
-_ negate_int64 (int) int
-_ negate_double (double) double
_+_ add_string (string,string) string
_+_ add_bytes (bytes,bytes) bytes
_+_ add_list (list(A),list(A)) list(A)
_+_ add_timestamp_duration (timestamp,duration) timestamp
_+_ add_duration_timestamp (duration,timestamp) timestamp
_+_ add_duration_duration (duration,duration) duration
_-_ subtract_timestamp_timestamp (timestamp,timestamp) duration
_-_ subtract_timestamp_duration (timestamp,duration) timestamp
_-_ subtract_duration_duration (duration,duration) duration
_%_ modulo_int64 (int,int) int
_%_ modulo_uint64 (uint,uint) uint
_[_] index_list (list(A),int) A
_[_] index_map (map(A,B),A) B
@in in_list (A,list(A)) bool
@in in_map (A,map(A,B)) bool
size size_string (string) int
size size_bytes (bytes) int
size size_list (list(A)) int
size size_map (map(A,B)) int
size string_size string.() int
size bytes_size bytes.() int
size list_size list(A).() int
size map_size map(A,B).() int
int int64_to_int64 (int) int
int uint64_to_int64 (uint) int
int double_to_int64 (double) int
int string_to_int64 (string) int
int timestamp_to_int64 (timestamp) int
uint uint64_to_uint64 (uint) uint
uint int64_to_uint64 (int) uint
uint double_to_uint64 (double) uint
uint string_to_uint64 (string) uint
double double_to_double (double) double
double int64_to_double (int) double
double uint64_to_double (uint) double
double string_to_double (string) double
string string_to_string (string) string
string int64_to_string (int) string
string uint64_to_string (uint) string
string double_to_string (double) string
string bytes_to_string (bytes) string
string bool_to_string (bool) string
string timestamp_to_string (timestamp) string
string duration_to_string (duration) string
string ip_to_string (IP) string
string cidr_to_string (CIDR) string
bytes bytes_to_bytes (bytes) bytes
bytes string_to_bytes (string) bytes
bool bool_to_bool (bool) bool
bool string_to_bool (string) bool
duration duration_to_duration (duration) duration
duration string_to_duration (string) duration
timestamp timestamp_to_timestamp (timestamp) timestamp
timestamp string_to_timestamp (string) timestamp
timestamp int64_to_timestamp (int) timestamp
dyn to_dyn (A) dyn
type type (A) type
contains contains_string string.(string) bool
endsWith ends_with_string string.(string) bool
startsWith starts_with_string string.(string) bool
matches matches (string,string) bool
matches matches_string string.(string) bool
charAt string_char_at_int string.(int) string
indexOf string_index_of_string string.(string) int
indexOf string_index_of_string_int string.(string,int) int
lastIndexOf string_last_index_of_string string.(string) int
lastIndexOf string_last_index_of_string_int string.(string,int) int
lowerAscii string_lower_ascii string.() string
upperAscii string_upper_ascii string.() string
trim string_trim string.() string
replace string_replace_string_string string.(string,string) string
replace string_replace_string_string_int string.(string,string,int) string
split string_split_string string.(string) list(string)
split string_split_string_int string.(string,int) list(string)
substring string_substring_int string.(int) string
substring string_substring_int_int string.(int,int) string
format string_format string.(list(dyn)) string
strings.quote strings_quote (string) string
join list_join list(string).() string
join list_join_string list(string).(string) string
isSorted list_is_sorted list(A).() bool
sum list_sum list(A).() A
max list_max list(A).() A
min list_min list(A).() A
indexOf list_a_index_of_int list(A).(A) int
lastIndexOf list_a_last_index_of_int list(A).(A) int
find string_find_string string.(string) string
findAll string_find_all_string string.(string) list(string)
findAll string_find_all_string_int string.(string,int) list(string)
url string_to_url (string) URL
isURL is_url_string (string) bool
getScheme url_get_scheme URL.() string
getHost url_get_host URL.() string
getHostname url_get_hostname URL.() string
getPort url_get_port URL.() string
getEscapedPath url_get_escaped_path URL.() string
getQuery url_get_query URL.() map(string,list(string))
quantity string_to_quantity (string) Quantity
isQuantity is_quantity_string (string) bool
sign quantity_sign Quantity.() int
isGreaterThan quantity_is_greater_than Quantity.(Quantity) bool
isLessThan quantity_is_less_than Quantity.(Quantity) bool
compareTo quantity_compare_to Quantity.(Quantity) int
asApproximateFloat quantity_get_float Quantity.() double
asInteger quantity_get_int Quantity.() int
isInteger quantity_is_integer Quantity.() bool
add quantity_add Quantity.(Quantity) Quantity
add quantity_add_int Quantity.(int) Quantity
sub quantity_sub Quantity.(Quantity) Quantity
sub quantity_sub_int Quantity.(int) Quantity
ip string_to_ip (string) IP
family ip_family IP.() int
ip.isCanonical ip_is_canonical (string) bool
isUnspecified ip_is_unspecified IP.() bool
isLoopback ip_is_loopback IP.() bool
isLinkLocalMulticast ip_is_link_local_multicast IP.() bool
isLinkLocalUnicast ip_is_link_local_unicast IP.() bool
isGlobalUnicast ip_is_global_unicast IP.() bool
isIP is_ip (string) bool
cidr string_to_cidr (string) CIDR
containsIP cidr_contains_ip_string CIDR.(string) bool
containsIP cidr_contains_ip_ip CIDR.(IP) bool
containsCIDR cidr_contains_cidr_string CIDR.(string) bool
containsCIDR cidr_contains_cidr CIDR.(CIDR) bool
ip cidr_ip CIDR.() IP
prefixLength cidr_prefix_length CIDR.() int
masked cidr_masked CIDR.() CIDR
isCIDR is_cidr (string) bool
semver string_to_semver (string) Semver
semver string_bool_to_semver (string,bool) Semver
isSemver is_semver_string (string) bool
isSemver is_semver_string_bool (string,bool) bool
isGreaterThan semver_is_greater_than Semver.(Semver) bool
isLessThan semver_is_less_than Semver.(Semver) bool
compareTo semver_compare_to Semver.(Semver) int
major semver_major Semver.() int
minor semver_minor Semver.() int
patch semver_patch Semver.() int
format.named format-named (string) optional(Format)
validate format-validate Format.(string) optional(list(string))
sets.contains list_sets_contains_list (list(A),list(A)) bool
sets.equivalent list_sets_equivalent_list (list(A),list(A)) bool
sets.intersects list_sets_intersects_list (list(A),list(A)) bool
slice list_slice list(A).(int,int) list(A)
flatten list_flatten list(list(A)).() list(A)
flatten list_flatten_int list(dyn).(int) list(dyn)
lists.range lists_range (int) list(int)
reverse list_reverse list(A).() list(A)
distinct list_distinct list(A).() list(A)
optional.of optional_of (A) optional(A)
optional.ofNonZeroValue optional_ofNonZeroValue (A) optional(A)
optional.none optional_none () optional(dyn)
hasValue optional_hasValue optional(A).() bool
value optional_value optional(A).() A
orValue optional_orValue_value optional(A).(A) A
or optional_or_optional optional(A).(optional(A)) optional(A)
cel.@mapInsert cel_@mapInsert_map_key_value (map(A,B),A,B) map(A,B)
cel.@mapInsert cel_@mapInsert_map_map (map(A,B),map(A,B)) map(A,B)
""".strip().splitlines()
    for id_part, kind in _NUMERIC:
        yield f"_+_ add_{id_part} ({kind},{kind}) {kind}"
        yield f"_-_ subtract_{id_part} ({kind},{kind}) {kind}"
        yield f"_*_ multiply_{id_part} ({kind},{kind}) {kind}"
        yield f"_/_ divide_{id_part} ({kind},{kind}) {kind}"
    for operator, prefix in (
        ("_<_", "less"),
        ("_<=_", "less_equals"),
        ("_>_", "greater"),
        ("_>=_", "greater_equals"),
    ):
        for id_part, kind in _COMPARABLE:
            yield f"{operator} {prefix}_{id_part} ({kind},{kind}) bool"
        for left_id, left in _NUMERIC:
            for right_id, right in _NUMERIC:
                if left != right:
                    yield f"{operator} {prefix}_{left_id}_{right_id} ({left},{right}) bool"
    for type_name, kind in _SORTABLE:
        yield f"sort list_{type_name}_sort list({kind}).() list({kind})"
    for accessor, name in (
        ("getFullYear", "year"),
        ("getMonth", "month"),
        ("getDayOfYear", "day_of_year"),
        ("getDayOfMonth", "day_of_month"),
        ("getDate", "day_of_month_1_based"),
        ("getDayOfWeek", "day_of_week"),
        ("getHours", "hours"),
        ("getMinutes", "minutes"),
        ("getSeconds", "seconds"),
        ("getMilliseconds", "milliseconds"),
    ):
        yield f"{accessor} timestamp_to_{name} timestamp.() int"
        yield f"{accessor} timestamp_to_{name}_with_tz timestamp.(string) int"
        if name in ("hours", "minutes", "seconds", "milliseconds"):
            yield f"{accessor} duration_to_{name} duration.() int"
    for named in (
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime",
    ):
        yield f"format.{named} format.{named} () Format"


def _parse_type(text: str) -> CelType:
    text = text.strip()
    if "(" in text:
        head, inner = text.split("(", 1)
        parts = _split_params(inner[:-1])
        params = tuple(_parse_type(part) for part in parts)
        if head == "optional":
            return _optional(params[0])
        return CelType(head, "", params)
    if text in ("A", "B"):
        return CelType("typeparam", text)
    if text in _NAMED:
        return _NAMED[text]
    return _t(text)


def _split_params(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    if current:
        parts.append(current)
    return parts


@dataclass(frozen=True)
class Signature:
    overload_id: str
    member: bool
    params: tuple[CelType, ...]  # the target first, for member overloads
    result: CelType


@cache
def _signatures() -> dict[str, tuple[Signature, ...]]:
    table: dict[str, list[Signature]] = {}
    for line in _signature_lines():
        function, overload_id, call, result = line.split()
        member = ".(" in call
        target, _, args = call.rpartition(".(") if member else ("", "", call[1:])
        params = tuple(_parse_type(p) for p in _split_params(args[:-1]))
        if member:
            params = (_parse_type(target), *params)
        table.setdefault(function, []).append(
            Signature(overload_id, member, params, _parse_type(result))
        )
    return {name: tuple(signatures) for name, signatures in table.items()}


_TYPE_IDENTS = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
)


class NotEstimated(Exception):
    """An expression this estimator cannot type as the apiserver's checker does."""


# Type checking: each node's type and the overloads of each call -----------------------------
class _Checker:
    def __init__(self, variables: Mapping[str, CelType]) -> None:
        self.variables = dict(variables)
        self.scopes: list[dict[str, CelType]] = []
        self.types: dict[int, CelType] = {}
        self.overloads: dict[int, tuple[str, ...]] = {}
        self.globals: dict[int, str] = {}  # calls of namespaced functions: their full name
        self.fresh = 0

    def _lookup(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.variables.get(name)

    def check(self, e: Expr) -> CelType:
        t = self._check(e)
        self.types[e.id] = t
        return t

    def _check(self, e: Expr) -> CelType:
        if e.kind == "literal":
            return _literal_type(e.value)
        if e.kind == "ident":
            found = self._lookup(e.name)
            if found is not None:
                return found
            if e.name in _TYPE_IDENTS:
                return TYPE
            raise NotEstimated(f"undeclared reference to {e.name!r}")
        if e.kind == "select":
            qualified = _qualified_name(e)
            if qualified is not None and self._lookup(qualified.split(".")[0]) is None:
                raise NotEstimated(f"undeclared reference to {qualified!r}")
            assert e.operand is not None
            operand = self.check(e.operand)
            if e.test_only:
                return BOOL
            return _field_type(operand, e.name)
        if e.kind == "list":
            return _list(self._join([self.check(item) for item in e.args]))
        if e.kind == "map":
            keys = [self.check(k) for k, _ in e.entries]
            values = [self.check(v) for _, v in e.entries]
            return _t("map", self._join(keys), self._join(values))
        if e.kind == "comprehension":
            return self._comprehension(e)
        if e.kind == "call":
            return self._call(e)
        raise NotEstimated(f"{e.kind} expressions")

    def _join(self, types: list[CelType]) -> CelType:
        if not types:
            self.fresh += 1
            return CelType("typeparam", f"_free{self.fresh}")
        first = types[0]
        return first if all(t == first for t in types) else DYN

    def _comprehension(self, e: Expr) -> CelType:
        assert e.iter_range and e.accu_init and e.loop_condition and e.loop_step and e.result
        range_type = self.check(e.iter_range)
        accu = self.check(e.accu_init)
        if range_type.kind == "list":
            first, second = (
                (INT, range_type.params[0]) if e.iter_var2 else (range_type.params[0], DYN)
            )
        elif range_type.kind == "map":
            first, second = range_type.params[0], range_type.params[1]
        elif range_type.kind == "dyn":
            first, second = DYN, DYN
        else:
            raise NotEstimated(f"a comprehension over {range_type}")
        iteration = {e.iter_var: first}
        if e.iter_var2:
            iteration[e.iter_var2] = second
        for _ in range(2):  # the step may tell an empty list's or map's element type
            self.scopes.append({e.accu_var: accu})
            self.scopes.append(iteration)
            self.check(e.loop_condition)
            step = self.check(e.loop_step)
            self.scopes.pop()
            self.scopes.pop()
            if step == accu or not _more_specific(step, accu):
                break
            accu = step
        self.scopes.append({e.accu_var: accu})
        result = self.check(e.result)
        self.scopes.pop()
        return result

    def _call(self, e: Expr) -> CelType:
        name = e.name
        target = e.operand
        if target is not None:
            qualified = _qualified_name(target)
            if (
                qualified is not None
                and self._lookup(qualified.split(".")[0]) is None
                and f"{qualified}.{name}" in _signatures()
            ):
                # a namespaced function: the checker makes it a global call
                name, target = f"{qualified}.{name}", None
                self.globals[e.id] = name
        if name == "_?._":
            operand = self.check(e.args[0])
            self.check(e.args[1])
            field_name = e.args[1].value
            inner = operand.params[0] if _is_optional(operand) else operand
            self.overloads[e.id] = ("select_optional_field",)
            return _optional(_field_type(inner, str(field_name)))
        if name == "_[?_]":
            container = self.check(e.args[0])
            self.check(e.args[1])
            inner = container.params[0] if _is_optional(container) else container
            self.overloads[e.id] = ("optional_index",)
            if inner.kind == "list":
                return _optional(inner.params[0])
            if inner.kind == "map":
                return _optional(inner.params[1])
            return _optional(DYN)
        arguments = ([] if target is None else [self.check(target)]) + [
            self.check(arg) for arg in e.args
        ]
        candidates = [
            s
            for s in _signatures().get(name, ())
            if s.member == (target is not None) and len(s.params) == len(arguments)
        ]
        if not candidates:
            raise NotEstimated(f"function {name!r} with {len(arguments)} arguments")
        matched: list[tuple[Signature, CelType]] = []
        for signature in candidates:
            bindings: dict[str, CelType] = {}
            if all(
                _assign(p, a, bindings) for p, a in zip(signature.params, arguments, strict=True)
            ):
                matched.append((signature, _substitute(signature.result, bindings)))
        if not matched:
            shown = ", ".join(map(str, arguments))
            raise NotEstimated(f"no overload of {name!r} for ({shown})")
        self.overloads[e.id] = tuple(s.overload_id for s, _ in matched)
        results = {r for _, r in matched}
        return matched[0][1] if len(results) == 1 else DYN

    def final_types(self) -> dict[int, CelType]:
        return {node: _resolved(t) for node, t in self.types.items()}


def _is_optional(t: CelType) -> bool:
    return t.kind == "opaque" and t.name == "optional_type"


def _more_specific(candidate: CelType, than: CelType) -> bool:
    return _has_free(than) and not _has_free(candidate) and candidate.kind == than.kind


def _has_free(t: CelType) -> bool:
    return t.kind == "typeparam" or any(_has_free(p) for p in t.params)


def _resolved(t: CelType) -> CelType:
    """Unbound type parameters end as dyn, as in the checker's final types."""
    if t.kind == "typeparam":
        return DYN
    if not t.params:
        return t
    return CelType(t.kind, t.name, tuple(_resolved(p) for p in t.params), t.decl)


def _qualified_name(e: Expr) -> str | None:
    if e.kind == "ident":
        return e.name
    if e.kind == "select" and not e.test_only and e.operand is not None:
        inner = _qualified_name(e.operand)
        return None if inner is None else f"{inner}.{e.name}"
    return None


def _literal_type(value: object) -> CelType:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, cel_ast.Unsigned):
        return UINT
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    return BYTES


def _field_type(operand: CelType, name: str) -> CelType:
    if operand.kind == "struct" and operand.decl is not None:
        child = operand.decl.field(name)
        if child is None:
            raise NotEstimated(f"undefined field {name!r}")
        return _type_of(child)
    if operand.kind == "map":
        return operand.params[1]
    if operand.kind in ("dyn", "typeparam"):
        return DYN
    raise NotEstimated(f"selecting {name!r} from {operand}")


def _assign(param: CelType, arg: CelType, bindings: dict[str, CelType]) -> bool:
    if param.kind == "typeparam":
        bound = bindings.get(param.name)
        if bound is None or bound.kind in ("dyn", "typeparam"):
            bindings[param.name] = arg
            return True
        return _assign(bound, arg, bindings) or arg.kind in ("dyn", "typeparam")
    if arg.kind in ("dyn", "typeparam") or param.kind == "dyn":
        return True
    if param.kind != arg.kind or param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_assign(p, a, bindings) for p, a in zip(param.params, arg.params, strict=True))


def _substitute(t: CelType, bindings: Mapping[str, CelType]) -> CelType:
    if t.kind == "typeparam":
        return bindings.get(t.name, DYN)
    if not t.params:
        return t
    return CelType(t.kind, t.name, tuple(_substitute(p, bindings) for p in t.params), t.decl)


# The estimate (cel-go checker/cost.go) -----------------------------------------------------
@dataclass
class _Local:
    path: tuple[str, ...] | None
    size: Range | None
    entry: _Entry | None


@dataclass(frozen=True)
class _Entry:
    container: str  # list or map
    key: Range
    value: Range

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, self.key.union(other.key), self.value.union(other.value))


@dataclass
class _Node:
    """cel-go's AstNode: what a function's estimate sees of an argument."""

    path: tuple[str, ...] | None
    type: CelType
    expr: Expr | None
    computed: Range | None


class _Coster:
    def __init__(
        self, root: DeclType, checked: _Checker, minor: minors.Minor = minors.NEWEST
    ) -> None:
        self.v22 = minor < minors.ENTRY_SIZES  # cel-go v0.22's (the module's documentation)
        self.root = root
        self.types = checked.final_types()
        self.overloads = checked.overloads
        self.globals = checked.globals
        self.paths: dict[int, tuple[str, ...]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}

    # sizes from the schema (apiextensions compilation.go sizeEstimator)
    def estimate_size(self, path: tuple[str, ...] | None) -> Range | None:
        if not path:
            return None
        current = self.root
        for name in path[1:]:
            if name in ("@items", "@values"):
                if current.elem is None:
                    return None
                current = current.elem
            elif name == "@keys":
                if current.key is None:
                    return None
                current = current.key
            else:
                child = current.field(name)
                if child is None:
                    return None
                current = child
        return Range(0, current.max_elements)

    def type_of(self, e: Expr) -> CelType:
        return self.types.get(e.id, DYN)

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path_of(self, e: Expr) -> tuple[str, ...] | None:
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None:
                return local.path
        return self.paths.get(e.id)

    def node(self, e: Expr) -> _Node:
        path = self.path_of(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return _Node(path, self.type_of(e), e, self.compute_size(e))

    def size_or_unknown(self, e: Expr) -> Range:
        return self.compute_size(e) or _UNKNOWN

    def compute_size(self, e: Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _expr_size(e)
        if literal is not None:
            return literal
        path = self.path_of(e)
        if self.v22 and path and path[0] in _ACCUMULATORS:
            path = None  # v0.22 sizes the node, whose path it drops
        estimated = self.estimate_size(path)
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        t = self.type_of(e)
        if t.kind in _SCALAR_KINDS if self.v22 else _is_scalar(t):
            return _ONE
        if self.v22:
            return None
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def entry_of(self, e: Expr) -> _Entry | None:
        if self.v22:
            return None
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None and local.entry is not None:
                return local.entry
        return None

    def set_size(self, e: Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def set_entry(self, e: Expr, entry: _Entry | None) -> None:
        if entry is not None:
            self.entries[e.id] = entry

    def _iteration_local(self, range_expr: Expr, want: str) -> _Local:
        entry = self.entry_of(range_expr)
        container = entry.container if entry else self.type_of(range_expr).kind
        path = self.path_of(range_expr) or ()
        key, value = (entry.key, entry.value) if entry else (None, None)
        if want == "key":
            sub, size = ("@indices" if container == "list" else "@keys"), key
        elif want == "value":
            sub, size = ("@items" if container == "list" else "@values"), value
        elif container == "list":
            sub, size = "@items", value
        else:
            sub, size = "@keys", key
        return _Local((*path, sub), size, None)

    def cost(self, e: Expr | None) -> Range:
        if e is None:
            return _ZERO
        if e.kind == "literal":
            return _ZERO
        if e.kind == "ident":
            local = self.peek(e.name)
            path = local.path if local is not None else (e.name,)
            if path:
                self.paths[e.id] = path
            else:
                self.paths.pop(e.id, None)
            return _ONE
        if e.kind == "select":
            return self._select(e)
        if e.kind == "call":
            return self._call(e)
        if e.kind == "list":
            total, item = _ZERO, Range(0 if not e.args else _MAX, 0)
            for element in e.args:
                total = total.add(self.cost(element))
                item = item.union(self.size_or_unknown(element))
            self.set_entry(e, _Entry("list", _ONE, item))
            return total.add(_fixed(10))
        if e.kind == "map":
            total = _ZERO
            key = value = Range(0 if not e.entries else _MAX, 0)
            for k, v in e.entries:
                total = total.add(self.cost(k)).add(self.cost(v))
                key = key.union(self.size_or_unknown(k))
                value = value.union(self.size_or_unknown(v))
            self.set_entry(e, _Entry("map", key, value))
            return total.add(_fixed(30))
        if e.kind == "struct":
            total = _ZERO
            for _, v in e.entries:
                total = total.add(self.cost(v))
            return total.add(_fixed(40))
        return self._comprehension(e)

    def _select(self, e: Expr) -> Range:
        assert e.operand is not None
        if e.test_only:  # has(): no cost of its own in Kubernetes (PresenceTestHasCost(false))
            return self.cost(e.operand)
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in ("map", "struct", "typeparam"):
            total = total.add(_ONE)
        self.paths[e.id] = (*(self.path_of(e.operand) or ()), e.name)
        return total

    def _comprehension(self, e: Expr) -> Range:
        assert e.iter_range and e.accu_init and e.loop_condition and e.loop_step and e.result
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        if self.v22:
            return self._comprehension_v22(e, total)
        self.push(
            e.accu_var,
            _Local(
                self.path_of(e.accu_init),
                self.compute_size(e.accu_init),
                self.entry_of(e.accu_init),
            ),
        )
        if e.iter_var2:
            self.push(e.iter_var, self._iteration_local(e.iter_range, "key"))
            self.push(e.iter_var2, self._iteration_local(e.iter_range, "value"))
        else:
            self.push(e.iter_var, self._iteration_local(e.iter_range, "single"))
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = total.add(self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = total.add(count.multiply(step.add(loop)))
        if e.accu_init.kind == "literal":
            self.set_size(e, self.compute_size(e.accu_init))
        elif e.accu_init.kind in ("list", "map"):
            self.set_size(e, count)
            self.set_entry(e, self.entry_of(e.loop_step))
        return total

    def _comprehension_v22(self, e: Expr, total: Range) -> Range:
        """cel-go v0.22's costComprehension: only the (first) iteration variable is tracked,
        by path; the comprehension's size is its range's."""
        assert e.iter_range and e.loop_condition and e.loop_step
        kind = self.type_of(e.iter_range).kind
        sub = {"list": "@items", "map": "@keys"}.get(kind)
        path = (*(self.path_of(e.iter_range) or ()), sub) if sub else None
        self.push(e.iter_var, _Local(path, None, None))
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        total = total.add(self.cost(e.result))
        count = self.size_or_unknown(e.iter_range)
        self.set_size(e, count)
        return total.add(count.multiply(step.add(loop)))

    def _call(self, e: Expr) -> Range:
        name = self.globals.get(e.id, e.name)
        operand = None if e.id in self.globals else e.operand
        if name == "dyn" and operand is None and len(e.args) == 1 and not self.v22:
            argument = self.cost(e.args[0])
            self.set_size(e, self.compute_size(e.args[0]))
            self.set_entry(e, self.entry_of(e.args[0]))
            return _ONE.add(argument)
        arg_costs = []
        args = []
        for arg in e.args:
            arg_costs.append(self.cost(arg))
            args.append(self.node(arg))
        overload_ids = self.overloads.get(e.id, ())
        if not overload_ids:
            return _ZERO
        total = _ZERO
        target: _Node | None = None
        if operand is not None:
            total = total.add(self.cost(operand))
            target = self.node(operand)
        call_cost = Range(_MAX, 0)
        result: Range | None = None
        for overload in overload_ids:
            estimate, size = self._function(e, name, overload, target, args, arg_costs)
            call_cost = call_cost.union(estimate)
            if size is not None:
                result = size if result is None else result.union(size)
            if overload in ("index_list", "index_map") and args:
                entry = self.entry_of(e.args[0])
                result = entry.value if entry else None
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = (*(self.path_of(e.args[0]) or ()), sub)
            if result is None:
                result = self.compute_size(e)
        self.set_size(e, result)
        return total.add(call_cost)

    def _size(self, node: _Node) -> Range:
        """Kubernetes' sizeEstimate and the sets library's estimateSize."""
        if node.computed is not None:
            return node.computed
        return self.estimate_size(node.path) or _UNKNOWN

    def _function(
        self,
        e: Expr,
        name: str,
        overload: str,
        target: _Node | None,
        args: list[_Node],
        arg_costs: list[Range],
    ) -> tuple[Range, Range | None]:
        args_total = _ZERO
        for cost in arg_costs:
            args_total = args_total.add(cost)
        lists = self._lists(overload, target, args)
        if lists is not None:
            estimate, size = lists
            return estimate.add(args_total), size
        sets_factor = {
            "list_sets_contains_list": 1.0,
            "list_sets_intersects_list": 1.0,
            "list_sets_equivalent_list": 2.0,
        }.get(overload)
        if sets_factor is not None and len(args) == 2:
            product = self._size(args[0]).multiply(self._size(args[1]))
            return product.factor(sets_factor).add(_ONE).add(args_total), None
        kubernetes = self._kubernetes(name, overload, target, args)
        if kubernetes is not None:
            estimate, size = kubernetes
            return estimate.add(args_total), size
        return self._standard(e, overload, target, args, arg_costs, args_total)

    def _lists(
        self, overload: str, target: _Node | None, args: list[_Node]
    ) -> tuple[Range, Range | None] | None:
        """The lists extension's estimators (cel-go ext/lists.go, version 3): a new list of
        ``size`` items at ``factor`` per item, plus the call and the list's creation."""
        if overload == "lists_range" and target is None and len(args) == 1:
            factor, size = 1.0, _fixed(_int_literal(args[0], _MAX))
        elif target is None:
            return None
        elif overload == "list_slice" and len(args) == 2:
            start = _int_literal(args[0], 0)
            end = _int_literal(args[1], self._size(target).max)
            factor, size = 1.0, _fixed((end - start) % (1 << 64))
        elif overload in ("list_flatten", "list_flatten_int") and len(args) <= 1:
            factor = float(_int_literal(args[0], _MAX)) if args else 1.0
            size = self._size(target)
        elif overload == "list_reverse" and not args:
            factor, size = 1.0, self._size(target)
        elif overload == "list_distinct" and not args:
            factor, size = 2.0, self._size(target).multiply(self._size(target))
        elif overload.endswith("_sort") and overload.startswith("list_") and not args:
            element = target.type.params[0] if target.type.params else DYN
            factor = 2.0 + (_STRING_TRAVERSAL if element.kind in ("string", "bytes") else 0)
            size = self._size(target).multiply(self._size(target))
        else:
            return None
        return size.factor(factor).add(_ONE).add(_fixed(10)), size

    def _kubernetes(
        self, function: str, overload: str, target: _Node | None, args: list[_Node]
    ) -> tuple[Range, Range | None] | None:
        """apiserver library/cost.go EstimateCallCost."""
        if function in (
            "isSorted",
            "sum",
            "max",
            "min",
            "indexOf",
            "lastIndexOf",
        ):
            if target is None:
                return None
            element = self._list_element(target)
            if element is None:
                return self._size(target).factor(_STRING_TRAVERSAL), None
            per_element = _ONE
            if element.type.kind in ("string", "bytes"):
                per_element = per_element.add(self._size(element).factor(_STRING_TRAVERSAL))
            return self._size(target).multiply(per_element), None
        if function == "url" and len(args) == 1:
            size = self._size(args[0])
            return size.factor(_STRING_TRAVERSAL), size
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = self._size(target)
            return size.factor(_STRING_TRAVERSAL), size
        if function == "replace" and target is not None and len(args) >= 2:
            return self._replace(target, args)
        if function == "split" and target is not None:
            size = self._size(target)
            most = size.max
            if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == "literal":
                value = args[1].expr.value
                if isinstance(value, int) and not isinstance(value, bool):
                    most = value % (1 << 64)
            return size.factor(2 * _STRING_TRAVERSAL), Range(0, most)
        if function == "join" and target is not None:
            joined = _ZERO
            count = self._size(target)
            element = self._list_element(target)
            if element is not None:
                joined = count.multiply(self._size(element))
            if args:
                separators = Range(max(count.min - 1, 0), max(count.max - 1, 0))
                joined = joined.add(self._size(args[0]).multiply(separators))
            return joined.factor(_STRING_TRAVERSAL), joined
        if function in ("find", "findAll") and target is not None and args:
            size = self._size(target)
            text = size.add(_ONE).factor(_STRING_TRAVERSAL)
            regex = self._size(args[0]).factor(_REGEX_LENGTH)
            return text.multiply(regex), Range(0, size.max)
        if function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver"):
            if args:
                return self._size(args[0]).factor(_STRING_TRAVERSAL), None
            return None
        if function == "ip":
            if overload == "cidr_ip":
                return _ONE, None
            if args:
                return self._size(args[0]).factor(_STRING_TRAVERSAL), None
            return None
        if function == "ip.isCanonical" and args:
            return self._size(args[0]).factor(2 * _STRING_TRAVERSAL), None
        if function in ("containsIP", "containsCIDR") and args:
            both = Range(4, 16).add(Range(4, 16)).factor(_STRING_TRAVERSAL)
            if function == "containsCIDR":
                both = both.add(Range(4, 16).factor(_STRING_TRAVERSAL)).add(_ONE)
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                both = both.add(self._size(args[0]).factor(_STRING_TRAVERSAL))
            return both, None
        if function == "validate" and args:
            regex_cost = 128 * _REGEX_LENGTH
            return self._size(args[0]).factor(_STRING_TRAVERSAL).factor(regex_cost), None
        if function in _NOMINAL:
            return _ONE, None
        if function == "_==_" and len(args) == 2 and args[0].type == args[1].type:
            kind, name = args[0].type.kind, args[0].type.name
            if name in _UNIT_EQUALITY and kind in ("struct", "opaque"):
                return _ONE, None
            if kind == "struct" and name == "kubernetes.NamedFormat":
                return Range(1, 64).factor(_STRING_TRAVERSAL), None
            if kind == "struct" and name == "kubernetes.URL":
                size = _ONE
                right = args[1].computed
                if right is not None:
                    size = right.union(right)
                return Range(1, size.max).factor(_STRING_TRAVERSAL), None
        return None

    def _replace(self, target: _Node, args: list[_Node]) -> tuple[Range, Range | None]:
        size = self._size(target)
        to_replace = self._size(args[0])
        replace_with = self._size(args[1])
        # the longest result: the shortest text replaced by the longest replacement
        count_max, kept_max = _replaced(
            size.max, to_replace.min, unchanged=replace_with.max <= to_replace.min
        )
        count_min, kept_min = _replaced(
            size.min, to_replace.max, unchanged=to_replace.max <= replace_with.min
        )
        result = Range(count_min, count_max).multiply(replace_with).add(Range(kept_min, kept_max))
        return size.factor(2 * _STRING_TRAVERSAL), result

    def _list_element(self, node: _Node) -> _Node | None:
        if not node.type.params:
            return None
        path = (*node.path, "@items") if node.path else None
        return _Node(path, node.type.params[0], None, None)

    def _standard(
        self,
        e: Expr,
        overload: str,
        target: _Node | None,
        args: list[_Node],
        arg_costs: list[Range],
        args_total: Range,
    ) -> tuple[Range, Range | None]:
        """cel-go's functionCost for the overloads it prices by size."""
        traversal = _STRING_TRAVERSAL
        if overload == "string_format" and target is not None:
            return self._sized(target).factor(traversal).add(args_total), None
        if overload == "string_to_bytes" and len(args) == 1:
            size = self._sized(args[0])
            return size.factor(traversal).add(args_total), Range(size.min, _mul(size.max, 4))
        if overload == "bytes_to_string" and len(args) == 1:
            size = self._sized(args[0])
            return size.factor(traversal).add(args_total), Range(size.min // 4, size.max)
        if overload == "strings_quote" and len(args) == 1:
            size = self._sized(args[0])
            result = Range(_add(size.min, 2), _add(_mul(size.max, 2), 2))
            return size.factor(traversal).add(args_total), result
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return self._sized(args[0]).factor(traversal).add(args_total), None
        if overload == "in_list" and len(args) == 2:
            return self._sized(args[1]).factor(1).add(args_total), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = self._sized(target).add(_ONE).factor(traversal)
            regex = self._sized(args[0]).factor(_REGEX_LENGTH)
            return text.multiply(regex).add(args_total), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            text = self._sized(target).factor(traversal)
            part = self._sized(args[0]).factor(traversal)
            return text.multiply(part).add(args_total), None
        if overload in ("logical_or", "logical_and"):
            left, right = arg_costs[0], arg_costs[1]
            return Range(left.min, left.add(right).max), None
        if overload == "conditional":
            size = self._sized(args[1]).union(self._sized(args[2]))
            first = self.entry_of(e.args[1])
            second = self.entry_of(e.args[2])
            self.set_entry(e, first.union(second) if first is not None else None)
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            joined = self._sized(args[0]).add(self._sized(args[1]))
            first = self.entry_of(e.args[0])
            entry = first.union(self.entry_of(e.args[1])) if first is not None else None
            if entry is not None:
                self.set_entry(e, entry)
            if overload == "add_list":
                return _ONE.add(args_total), joined
            return joined.factor(traversal).add(args_total), joined
        if overload in _SIZED_COMPARISONS:
            left, right = self._sized(args[0]), self._sized(args[1])
            smallest = min(left.max, right.max)
            lowest = 1 if smallest > 0 else 0
            return Range(lowest, smallest).factor(traversal).add(args_total), None
        return _ONE.add(args_total), None

    @staticmethod
    def _sized(node: _Node) -> Range:
        return node.computed if node.computed is not None else _UNKNOWN


def _int_literal(node: _Node, otherwise: int) -> int:
    """An int literal argument's value (a negative one as 0), else ``otherwise``."""
    value = None if node.expr is None or node.expr.kind != "literal" else node.expr.value
    if not isinstance(value, int) or _literal_type(value) != INT:
        return otherwise
    return max(value, 0)


def _replaced(length: int, replaced: int, unchanged: bool) -> tuple[int, int]:
    """(how many replacements, how many characters kept) of ``replace`` on a string of
    ``length`` replacing text of length ``replaced``; ``unchanged``: the replacement does
    not change the length that way."""
    if replaced == 0:  # around every character
        return (length + 1 if length < _MAX else length), length
    if unchanged:
        return 0, length
    return math.ceil(float(length) / float(replaced)), 0


_NOMINAL = frozenset(
    {
        "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "format.named",
        "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
        "compareTo", "add", "sub", "major", "minor", "patch", "getScheme", "getHostname",
        "getHost", "getPort", "getEscapedPath", "getQuery", "serviceAccount", "path", "group",
        "resource", "subresource", "namespace", "name", "allowed", "reason", "error", "errored",
    }
)  # fmt: skip
_SIZED_COMPARISONS = frozenset(
    {
        *(f"{op}_{kind}" for op in ("less", "greater", "less_equals", "greater_equals")
          for kind in ("string", "bytes")),
        "equals",
        "not_equals",
    }
)  # fmt: skip


def _expr_size(e: Expr) -> Range | None:
    if e.kind == "literal":
        if isinstance(e.value, str):
            return _fixed(len(e.value))
        if isinstance(e.value, bytes):
            return _fixed(len(e.value))
        return _ONE
    if e.kind == "list":
        return _fixed(len(e.args))
    if e.kind == "map":
        return _fixed(len(e.entries))
    return None


# Parsing, with the two-variable macros the parser here lacks ----------------------------------
@cache
def _parse_environment() -> Any:
    # imported here: loading CRDs without rules does not pay for the CEL runtime
    from cel_expr_python import cel  # type: ignore[import-untyped]
    from cel_expr_python.ext import ext_optional  # type: ignore[import-untyped]

    return cel.NewEnv(extensions=[ext_optional.ExtOptional()])


class _Ids:
    def __init__(self) -> None:
        self.next = -1

    def take(self) -> int:
        self.next -= 1
        return self.next


@lru_cache(maxsize=4096)
def parse(text: str) -> Expr | None:
    """The rule's syntax tree with macros expanded as cel-go expands them, or None when it
    does not parse. Shared (rules repeat across versions and CRDs): never modified."""
    try:
        given = cel_source.for_runtime(text)
        tree = cel_ast.read(_parse_environment().compile(given, disable_check=True).serialize())
    except Exception:  # the runtime raises plain RuntimeError for any parse error
        return None
    return _expand_two_variable(tree, _Ids())


_TWO_VARIABLE: dict[str, tuple[int, ...]] = {
    "all": (3,), "exists": (3,), "existsOne": (3,), "transformList": (3, 4),
    "transformMap": (3, 4), "transformMapEntry": (3, 4),
}  # fmt: skip


def _expand_two_variable(e: Expr, ids: _Ids) -> Expr:
    for name in ("operand", "iter_range", "accu_init", "loop_condition", "loop_step", "result"):
        child = getattr(e, name)
        if child is not None:
            setattr(e, name, _expand_two_variable(child, ids))
    e.args = [_expand_two_variable(a, ids) for a in e.args]
    e.entries = [(_expand_two_variable(k, ids), _expand_two_variable(v, ids)) for k, v in e.entries]
    counts = _TWO_VARIABLE.get(e.name, ()) if e.kind == "call" else ()
    if e.operand is None or len(e.args) not in counts:
        return e
    first, second = e.args[0], e.args[1]
    if first.kind != "ident" or second.kind != "ident":
        return e
    return _two_variable(e, first.name, second.name, ids)


def _two_variable(e: Expr, key: str, value: str, ids: _Ids) -> Expr:
    accu = "@result"

    def node(kind: Any, **parts: Any) -> Expr:
        return Expr(ids.take(), kind, **parts)

    def ident() -> Expr:
        return node("ident", name=accu)

    def call(function: str, *args: Expr) -> Expr:
        return node("call", name=function, args=list(args))

    args = e.args
    condition = node("literal", value=True)
    result = ident()
    if e.name == "all":
        init = node("literal", value=True)
        condition = call("@not_strictly_false", ident())
        step = call("_&&_", ident(), args[2])
    elif e.name == "exists":
        init = node("literal", value=False)
        condition = call("@not_strictly_false", call("!_", ident()))
        step = call("_||_", ident(), args[2])
    elif e.name == "existsOne":
        init = node("literal", value=0)
        one = node("literal", value=1)
        step = call("_?_:_", args[2], call("_+_", ident(), one), ident())
        result = call("_==_", ident(), node("literal", value=1))
    else:
        transform = args[-1]
        if e.name == "transformList":
            init = node("list")
            step = call("_+_", ident(), node("list", args=[transform]))
        elif e.name == "transformMap":
            init = node("map")
            step = call("cel.@mapInsert", ident(), node("ident", name=key), transform)
        else:
            init = node("map")
            step = call("cel.@mapInsert", ident(), transform)
        if len(args) == 4:
            step = call("_?_:_", args[2], step, ident())
    return Expr(
        e.id,
        "comprehension",
        iter_var=key,
        iter_var2=value,
        iter_range=e.operand,
        accu_var=accu,
        accu_init=init,
        loop_condition=condition,
        loop_step=step,
        result=result,
    )


def estimate(
    text: str,
    root: DeclType,
    optional_old_self: bool = False,
    result: CelType = BOOL,
    minor: minors.Minor = minors.NEWEST,
) -> int | None:
    """The most an expression costs (cel-go's CostEstimate.Max) with ``self`` and
    ``oldSelf`` of type ``root``, as the apiserver of ``minor`` estimates it; None where it
    does not parse, is not typed here or is not of type ``result`` (the apiserver then
    refuses it uncosted)."""
    tree = parse(text)
    if tree is None:
        return None
    self_type = _type_of(root)
    old_self = _optional(self_type) if optional_old_self else self_type
    checker = _Checker({"self": self_type, "oldSelf": old_self})
    try:
        checker.check(tree)
    except NotEstimated:
        return None
    coster = _Coster(root, checker, minor)
    if coster.types.get(tree.id) != result:
        return None
    return coster.cost(tree).max


# The budgets of a version's schema (apiextensions validation.go, cel_validation.go) ---------
@dataclass(frozen=True)
class OverBudget:
    """A budget the apiserver refuses the schema for: at ``parts`` (property names,
    ``schema.ITEMS``, ``schema.ADDITIONAL``), ``field`` names the expression
    (``x-kubernetes-validations[0].rule``), empty for the whole schema's total."""

    parts: tuple[str, ...]
    field: str
    expression: str
    message: str
    contributors: tuple[OverBudget, ...] = ()  # of the total: the costliest, at most 4


def below(node: Mapping[str, Any], cardinality: int) -> int | None:
    """The most times a child of ``node`` occurs, where ``node`` occurs ``cardinality``
    times: times its bound for a list or a map (extractMaxElements); None where unbounded."""
    kind = node.get("type")
    if kind == "array":
        bound = node.get("maxItems")
    elif kind == "object" and node.get("additionalProperties") is not None:
        bound = node.get("maxProperties")
    else:
        return cardinality
    return None if bound is None else _mul(cardinality, non_negative(bound))


@dataclass(frozen=True)
class Estimated:
    """A rule's estimated costs, None where not estimated (the apiserver then refuses it
    uncosted): its rule's, and its messageExpression's (None also without one, or when
    the rule is not estimated)."""

    rule: int | None
    message: int | None


def estimated(rule: Any, decl: DeclType, minor: minors.Minor = minors.NEWEST) -> Estimated | None:
    """The costs of one ``x-kubernetes-validations`` entry of a node of ``decl`` at
    ``minor``; None for an entry without a rule."""
    if not isinstance(rule, Mapping):
        return None
    text = str(rule.get("rule") or "")
    if not text.strip():
        return None
    optional = rule.get("optionalOldSelf") is True
    rule_cost = estimate(text, decl, optional, minor=minor)
    message = str(rule.get("messageExpression") or "")
    if rule_cost is None or not message.strip():
        return Estimated(rule_cost, None)
    return Estimated(rule_cost, estimate(message, decl, optional, STRING, minor))


class Site(Protocol):
    """What the budgets read of a schema node holding rules (``cel_reads.Site``)."""

    @property
    def parts(self) -> tuple[str, ...]: ...
    @property
    def node(self) -> Mapping[str, Any]: ...
    @property
    def rules(self) -> list[Any]: ...
    @property
    def resource_root(self) -> bool: ...
    @property
    def cardinality(self) -> int | None: ...


def budget_problems(
    sites: Sequence[Site], estimates: list[list[Estimated | None]]
) -> list[OverBudget]:
    """What the apiserver refuses a version's schema for by estimated cost, in its words;
    ``estimates``: each site's rules' (:func:`estimated`; none where CEL gives its node no
    type: the apiserver refuses those rules uncosted)."""
    problems: list[OverBudget] = []
    costly: list[tuple[int, OverBudget]] = []
    total = 0
    for site, site_costs in zip(sites, estimates, strict=True):
        times = site.cardinality
        for index, found in enumerate(site_costs):
            if found is None or found.rule is None:
                continue
            if times is None:  # unbounded: as many as the smallest node fits in a request
                decl = declare(site.node, site.resource_root)
                if decl is None:
                    break
                times = MAX_REQUEST_BYTES // (decl.min_size + 1)
            rule = site.rules[index]
            for key, text, cost in _rule_costs(rule, found.rule, found.message, times):
                where = f"x-kubernetes-validations[{index}].{key}"
                total = _add(total, cost)
                label = f"estimated {'rule' if key == 'rule' else 'messageExpression'} cost"
                if cost > PER_EXPRESSION_LIMIT:
                    message = budget_message(label, cost, PER_EXPRESSION_LIMIT)
                    problems.append(OverBudget(site.parts, where, text, message))
                if cost >= PER_CRD_LIMIT // 100:
                    costly.append((cost, OverBudget(site.parts, where, text, "")))
    if total > PER_CRD_LIMIT:
        label = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        message = budget_message(label, total, PER_CRD_LIMIT)
        costly.sort(key=lambda pair: -pair[0])
        contributors = tuple(contributor for _, contributor in costly[:4])
        problems.append(OverBudget((), "", "", message, contributors))
    return problems


def _rule_costs(
    rule: Mapping[str, Any], rule_cost: int, message_cost: int | None, times: int
) -> Iterator[tuple[str, str, int]]:
    """(rule or messageExpression, its text, its cost as the budgets count it) of one rule
    whose node occurs at most ``times`` times."""
    yield "rule", str(rule.get("rule")), 0 if rule_cost == 0 else _mul(rule_cost, times)
    if message_cost is not None:
        yield "messageExpression", str(rule.get("messageExpression")), message_cost
