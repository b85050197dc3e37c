"""The Kubernetes CEL libraries (k8s.io/apiserver ``pkg/cel/library``) as functions for
the CEL runtime, by the Kubernetes version that introduced them
(``pkg/cel/environment/base.go``).

Kubernetes' opaque types (URL, Quantity, IP, CIDR, Semver) are maps tagged with their
kind: the runtime cannot carry foreign objects, and no rule can tell, because the
libraries offer no way to look inside them but these functions.

Not here: the ``format`` library (1.31), two-variable comprehensions (1.32) and lists v3
(1.34); a rule that uses them does not compile and is reported as not evaluated.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]

from . import formats

TAG = "#k8s"
S, INT, D, B = cel.Type.STRING, cel.Type.INT, cel.Type.DOUBLE, cel.Type.BOOL
DYN = cel.Type.DYN
L = cel.Type.List(DYN)
LS = cel.Type.List(S)
M = cel.Type.Map(S, DYN)


class LibraryError(ValueError):
    """A library function refused its argument: the rule evaluates to an error."""


def _opaque(kind: str, value: str) -> dict[str, str]:
    return {TAG: kind, "value": value}


def _unwrap(obj: Mapping[str, Any], kind: str) -> str:
    if obj.get(TAG) != kind:
        raise LibraryError(f"no such overload: expected {kind}")
    return str(obj["value"])


def _kind(obj: Mapping[str, Any]) -> str:
    return str(obj.get(TAG, ""))


# URLs -------------------------------------------------------------------------------------
def _parse_url(text: str) -> urllib.parse.SplitResult:
    """Go's url.Parse as the URL library uses it: absolute URI or absolute path."""
    if not formats._is_uri(text):
        raise LibraryError(f"URL parse error during conversion from string: {text}")
    return urllib.parse.urlsplit(text)


def _url(text: str) -> dict[str, str]:
    _parse_url(text)
    return _opaque("url", text)


def _is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except (LibraryError, ValueError):
        return False
    return True


def _url_part(part: str) -> Callable[[Mapping[str, Any]], str]:
    def get(obj: Mapping[str, Any]) -> str:
        parsed = _parse_url(_unwrap(obj, "url"))
        if part == "scheme":
            return parsed.scheme
        if part == "host":
            return parsed.netloc.rpartition("@")[2]
        if part == "hostname":
            host = parsed.netloc.rpartition("@")[2]
            if host.startswith("["):
                return host[1 : host.index("]")]
            return host.rpartition(":")[0] if ":" in host else host
        if part == "port":
            host = parsed.netloc.rpartition("@")[2]
            tail = host.rpartition("]")[2] if host.startswith("[") else host
            return tail.rpartition(":")[2] if ":" in tail else ""
        return parsed.path

    return get


def _url_query(obj: Mapping[str, Any]) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(_parse_url(_unwrap(obj, "url")).query, keep_blank_values=True)


# Regex ------------------------------------------------------------------------------------
def _find(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, text)]
    return found if limit < 0 else found[:limit]


# Lists ------------------------------------------------------------------------------------
def _comparable(items: list[Any]) -> list[Any]:
    if any(isinstance(x, bool) or not isinstance(x, int | float | str | bytes) for x in items):
        raise LibraryError("no such overload: list elements are not comparable")
    return items


def _is_sorted(items: list[Any]) -> bool:
    items = _comparable(list(items))
    return all(a <= b for a, b in itertools.pairwise(items))


def _extreme(pick: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    def run(items: list[Any]) -> Any:
        if not items:
            raise LibraryError("min/max of an empty list")
        return pick(_comparable(list(items)))

    return run


def _sum(items: list[Any]) -> Any:
    return sum(_comparable(list(items)), 0)


# Quantity ---------------------------------------------------------------------------------
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_SUFFIX: dict[str, Fraction] = {
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
    "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
}  # fmt: skip


def quantity_value(text: str) -> Fraction:
    found = _QUANTITY.match(text)
    if not found:
        raise LibraryError(f"quantities must match the regular expression: {text}")
    number = Fraction(Decimal(found[1]))
    suffix = found[2] or ""
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def _quantity(text: str) -> dict[str, str]:
    quantity_value(text)
    return _opaque("quantity", text)


def _is_quantity(text: str) -> bool:
    try:
        quantity_value(text)
    except (LibraryError, InvalidOperation):
        return False
    return True


def _q(obj: Mapping[str, Any]) -> Fraction:
    return quantity_value(_unwrap(obj, "quantity"))


def _q_from(value: Fraction) -> dict[str, str]:
    text = (
        str(value.numerator)
        if value.denominator == 1
        else f"{Decimal(value.numerator) / Decimal(value.denominator)}"
    )
    return _opaque("quantity", text)


def _q_add(obj: Mapping[str, Any], other: Any) -> dict[str, str]:
    return _q_from(_q(obj) + (_q(other) if isinstance(other, Mapping) else Fraction(other)))


def _q_sub(obj: Mapping[str, Any], other: Any) -> dict[str, str]:
    return _q_from(_q(obj) - (_q(other) if isinstance(other, Mapping) else Fraction(other)))


def _q_as_integer(obj: Mapping[str, Any]) -> int:
    value = _q(obj)
    if value.denominator != 1 or not -(2**63) <= value.numerator < 2**63:
        raise LibraryError("cannot convert value to integer")
    return value.numerator


def _sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)


# IP and CIDR ------------------------------------------------------------------------------
def _ip_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IP library is strict: no leading zeros, no zones, no IPv4-mapped IPv6."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError as err:
        raise LibraryError(
            f"IP Address {text!r} parse error during conversion from string"
        ) from err
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise LibraryError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def _ip(text: str) -> dict[str, str]:
    return _opaque("ip", str(_ip_address(text)))


def _is_ip(text: str) -> bool:
    try:
        _ip_address(text)
    except LibraryError:
        return False
    return True


def _ip_is_canonical(text: str) -> bool:
    return str(_ip_address(text)) == text


def _ip_of(obj: Mapping[str, Any]) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_unwrap(obj, "ip"))


def _cidr_network(text: str) -> tuple[ipaddress.IPv4Interface | ipaddress.IPv6Interface, str]:
    address, slash, _ = text.partition("/")
    if not slash:
        raise LibraryError(f"network address {text!r} parse error during conversion from string")
    _ip_address(address)
    try:
        return ipaddress.ip_interface(text), text
    except ValueError as err:
        raise LibraryError(f"network address {text!r} parse error") from err


def _cidr(text: str) -> dict[str, str]:
    _cidr_network(text)
    return _opaque("cidr", text)


def _is_cidr(text: str) -> bool:
    try:
        _cidr_network(text)
    except LibraryError:
        return False
    return True


def _cidr_of(obj: Mapping[str, Any]) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return _cidr_network(_unwrap(obj, "cidr"))[0]


def _contains_ip(obj: Mapping[str, Any], other: Any) -> bool:
    address = _ip_address(other) if isinstance(other, str) else _ip_of(other)
    return address in _cidr_of(obj).network


def _contains_cidr(obj: Mapping[str, Any], other: Any) -> bool:
    inner = (_cidr_network(other)[0] if isinstance(other, str) else _cidr_of(other)).network
    outer = _cidr_of(obj).network
    return inner.version == outer.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def _ip_or_cidr_ip(obj: Mapping[str, Any]) -> dict[str, str]:
    return _opaque("ip", str(_cidr_of(obj).ip))


def _masked(obj: Mapping[str, Any]) -> dict[str, str]:
    return _opaque("cidr", str(_cidr_of(obj).network))


# Semver -----------------------------------------------------------------------------------
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


@dataclass(frozen=True)
class _Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...]

    def key(self) -> tuple[Any, ...]:
        pre: tuple[Any, ...] = tuple(
            (0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre
        )
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)


def _normalize(text: str) -> str:
    """semver(text, true): a leading v, missing minor or patch and leading zeros allowed."""
    text = text.removeprefix("v")
    cut = min((i for i in (text.find("-"), text.find("+")) if i >= 0), default=len(text))
    parts = text[:cut].split(".")
    parts = [p.lstrip("0") or "0" for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + text[cut:]


def _semver_parse(text: str, normalize: bool = False) -> _Version:
    found = _SEMVER.match(_normalize(text) if normalize else text)
    if not found:
        raise LibraryError(f"could not parse {text!r} as semver")
    pre = tuple(found[4].split(".")) if found[4] else ()
    return _Version(int(found[1]), int(found[2]), int(found[3]), pre)


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    version = _semver_parse(text, normalize)
    canonical = f"{version.major}.{version.minor}.{version.patch}" + (
        "-" + ".".join(version.pre) if version.pre else ""
    )
    return _opaque("semver", canonical)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _semver_parse(text, normalize)
    except LibraryError:
        return False
    return True


def _sv(obj: Mapping[str, Any]) -> _Version:
    return _semver_parse(_unwrap(obj, "semver"))


# Functions shared by several opaque kinds (one overload on maps, dispatched by tag) -------
def _compare(obj: Mapping[str, Any], other: Mapping[str, Any]) -> int:
    if _kind(obj) == "quantity":
        return _sign(_q(obj) - _q(other))
    a, b = _sv(obj).key(), _sv(other).key()
    return (a > b) - (a < b)


def _ip_family(obj: Mapping[str, Any]) -> int:
    return _ip_of(obj).version


def _prefix_length(obj: Mapping[str, Any]) -> int:
    return _cidr_of(obj).network.prefixlen


def _ip_test(test: str) -> Callable[[Mapping[str, Any]], bool]:
    def run(obj: Mapping[str, Any]) -> bool:
        address = _ip_of(obj)
        if test == "global":
            return not (
                address.is_unspecified
                or address.is_loopback
                or address.is_link_local
                or address.is_multicast
                or address == ipaddress.IPv4Address("255.255.255.255")
            )
        if test == "linkLocalMulticast":
            if isinstance(address, ipaddress.IPv4Address):
                return address in ipaddress.IPv4Network("224.0.0.0/24")
            return address.is_multicast and (address.packed[1] & 0x0F) == 2
        return bool(getattr(address, test))

    return run


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    return all(any(_equal(x, y) for y in a) for x in b)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(any(_equal(x, y) for y in a) for x in b)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


Overload = tuple[str, Any, list[Any], bool, Callable[..., Any]]


def _decl(name: str, *overloads: Overload) -> Any:
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(oid, ret, params, is_member=member, impl=impl)
            for oid, ret, params, member, impl in overloads
        ],
    )


def _libraries() -> list[tuple[tuple[int, int], list[Any]]]:
    compare_funcs = [
        _decl("isLessThan", ("k8s_less", B, [M, M], True, lambda a, b: _compare(a, b) < 0)),
        _decl("isGreaterThan", ("k8s_greater", B, [M, M], True, lambda a, b: _compare(a, b) > 0)),
        _decl("compareTo", ("k8s_compare", INT, [M, M], True, _compare)),
    ]
    return [
        (
            (1, 0),
            [
                _decl("url", ("string_to_url", M, [S], False, _url)),
                _decl("isURL", ("is_url_string", B, [S], False, _is_url)),
                _decl("getScheme", ("url_get_scheme", S, [M], True, _url_part("scheme"))),
                _decl("getHost", ("url_get_host", S, [M], True, _url_part("host"))),
                _decl("getHostname", ("url_get_hostname", S, [M], True, _url_part("hostname"))),
                _decl("getPort", ("url_get_port", S, [M], True, _url_part("port"))),
                _decl("getEscapedPath", ("url_get_path", S, [M], True, _url_part("path"))),
                _decl("getQuery", ("url_get_query", cel.Type.Map(S, LS), [M], True, _url_query)),
                _decl("find", ("string_find", S, [S, S], True, _find)),
                _decl(
                    "findAll",
                    ("string_find_all", LS, [S, S], True, _find_all),
                    ("string_find_all_n", LS, [S, S, INT], True, _find_all),
                ),
                _decl("isSorted", ("list_is_sorted", B, [L], True, _is_sorted)),
                _decl("sum", ("list_sum", DYN, [L], True, _sum)),
                _decl("min", ("list_min", DYN, [L], True, _extreme(min))),
                _decl("max", ("list_max", DYN, [L], True, _extreme(max))),
            ],
        ),
        (
            (1, 28),
            [
                _decl("quantity", ("string_to_quantity", M, [S], False, _quantity)),
                _decl("isQuantity", ("is_quantity_string", B, [S], False, _is_quantity)),
                _decl("sign", ("quantity_sign", INT, [M], True, lambda q: _sign(_q(q)))),
                _decl(
                    "isInteger",
                    ("quantity_is_integer", B, [M], True, lambda q: _q(q).denominator == 1),
                ),
                _decl("asInteger", ("quantity_as_integer", INT, [M], True, _q_as_integer)),
                _decl(
                    "asApproximateFloat",
                    ("quantity_as_float", D, [M], True, lambda q: float(_q(q))),
                ),
                _decl(
                    "add",
                    ("quantity_add", M, [M, M], True, _q_add),
                    ("quantity_add_int", M, [M, INT], True, _q_add),
                ),
                _decl(
                    "sub",
                    ("quantity_sub", M, [M, M], True, _q_sub),
                    ("quantity_sub_int", M, [M, INT], True, _q_sub),
                ),
                *compare_funcs,
            ],
        ),
        (
            (1, 29),
            [
                _decl("sets.contains", ("sets_contains", B, [L, L], False, _sets_contains)),
                _decl(
                    "sets.equivalent",
                    (
                        "sets_equivalent",
                        B,
                        [L, L],
                        False,
                        lambda a, b: _sets_contains(a, b) and _sets_contains(b, a),
                    ),
                ),
                _decl("sets.intersects", ("sets_intersects", B, [L, L], False, _sets_intersects)),
            ],
        ),
        (
            (1, 30),
            [
                _decl(
                    "ip",
                    ("string_to_ip", M, [S], False, _ip),
                    ("cidr_ip", M, [M], True, _ip_or_cidr_ip),
                ),
                _decl("isIP", ("is_ip", B, [S], False, _is_ip)),
                _decl("ip.isCanonical", ("ip_is_canonical", B, [S], False, _ip_is_canonical)),
                _decl("family", ("ip_family", INT, [M], True, _ip_family)),
                _decl(
                    "isUnspecified", ("ip_unspecified", B, [M], True, _ip_test("is_unspecified"))
                ),
                _decl("isLoopback", ("ip_loopback", B, [M], True, _ip_test("is_loopback"))),
                _decl(
                    "isLinkLocalMulticast",
                    ("ip_ll_multicast", B, [M], True, _ip_test("linkLocalMulticast")),
                ),
                _decl(
                    "isLinkLocalUnicast",
                    ("ip_ll_unicast", B, [M], True, _ip_test("is_link_local")),
                ),
                _decl("isGlobalUnicast", ("ip_global", B, [M], True, _ip_test("global"))),
                _decl("cidr", ("string_to_cidr", M, [S], False, _cidr)),
                _decl("isCIDR", ("is_cidr", B, [S], False, _is_cidr)),
                _decl(
                    "containsIP",
                    ("cidr_contains_ip_string", B, [M, S], True, _contains_ip),
                    ("cidr_contains_ip_ip", B, [M, M], True, _contains_ip),
                ),
                _decl(
                    "containsCIDR",
                    ("cidr_contains_cidr_string", B, [M, S], True, _contains_cidr),
                    ("cidr_contains_cidr", B, [M, M], True, _contains_cidr),
                ),
                _decl("masked", ("cidr_masked", M, [M], True, _masked)),
                _decl("prefixLength", ("cidr_prefix_length", INT, [M], True, _prefix_length)),
            ],
        ),
        (
            (1, 33),
            [
                _decl(
                    "semver",
                    ("string_to_semver", M, [S], False, _semver),
                    ("string_to_semver_normalize", M, [S, B], False, _semver),
                ),
                _decl(
                    "isSemver",
                    ("is_semver", B, [S], False, _is_semver),
                    ("is_semver_normalize", B, [S, B], False, _is_semver),
                ),
                _decl("major", ("semver_major", INT, [M], True, lambda v: _sv(v).major)),
                _decl("minor", ("semver_minor", INT, [M], True, lambda v: _sv(v).minor)),
                _decl("patch", ("semver_patch", INT, [M], True, lambda v: _sv(v).patch)),
            ],
        ),
    ]


def functions(kube_version: tuple[int, int]) -> list[Any]:
    """The function declarations of the environment of compatibility version
    ``kube_version`` (a server's own minor for the rules it held already, the minor before
    for new ones: :mod:`minors`). The comparison functions arrive with quantity (1.28) and
    serve semver too (1.33)."""
    return [f for since, decls in _libraries() if kube_version >= since for f in decls]
