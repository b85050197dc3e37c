"""Plain scalars as go-yaml v2 resolves them (YAML 1.1: ``on`` is true, ``010`` is 8), and
the limits and the error both YAML readers share (yaml_reader's fast path, libyaml_reader)."""

from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 200
MAX_EXPANDED_NODES = 20_000_000

_MAP: dict[str, tuple[str, Any]] = {}
for _words, _kind, _value in (
    ("y Y yes Yes YES true True TRUE on On ON", "bool", True),
    ("n N no No NO false False FALSE off Off OFF", "bool", False),
    ("~ null Null NULL", "null", None),
    (".nan .NaN .NAN", "float", math.nan),
    (".inf .Inf .INF +.inf +.Inf +.INF", "float", math.inf),
    ("-.inf -.Inf -.INF", "float", -math.inf),
    ("<<", "merge", "<<"),
):
    for _word in _words.split():
        _MAP[_word] = (_kind, _value)
_MAP[""] = ("null", None)

# Go's strconv.ParseInt/ParseUint(s, 0, 64) syntax (underscores already removed).
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
# go-yaml v2's yamlStyleFloat, and Go's ParseFloat syntax for text starting with a dot.
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
# Go's ParseFloat for text starting with a dot: underscores only between digits.
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?\Z")
_TIMESTAMP_START = re.compile(r"[0-9]{4}-")
_INT64_MIN, _INT64_END, _UINT64_END = -(2**63), 2**63, 2**64


class YamlError(ValueError):
    """A stream Kubernetes would not read; the message says where."""


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64), else None."""
    match = _GO_INT.match(text)
    if match is None:
        return None
    sign, digits = match.groups()
    octal = len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()
    magnitude = int(digits, 8 if octal else 0)
    value = -magnitude if sign == "-" else magnitude
    if _INT64_MIN <= value < _INT64_END:
        return value
    if not sign and value < _UINT64_END:  # ParseUint takes no sign
        return value
    return None


def _go_float(text: str) -> float | None:
    value = float(text)
    return None if math.isinf(value) else value  # ParseFloat fails out of range


def resolve_plain(text: str) -> tuple[str, Any]:
    """(kind, value) for a plain scalar as go-yaml v2 resolves it; kind "str" keeps text."""
    found = _MAP.get(text)
    if found is not None:
        return found
    first = text[0]
    if first == ".":
        if _DOT_FLOAT.match(text):
            value = _go_float(text.replace("_", ""))
            if value is not None:
                return "float", value
    elif first in "+-0123456789":
        if first.isdigit() and _TIMESTAMP_START.match(text):
            return "timestamp", text  # kept as the string for untyped targets
        plain = text.replace("_", "")
        integer = _go_int(plain)
        if integer is not None:
            return "int", integer
        if _YAML_FLOAT.match(plain):
            value = _go_float(plain)
            if value is not None:
                return "float", value
    return "str", text


def plain_differs(text: str) -> bool:
    """Whether Kubernetes reads the plain scalar text as anything but the string text."""
    return resolve_plain(text)[0] not in ("str", "timestamp")
