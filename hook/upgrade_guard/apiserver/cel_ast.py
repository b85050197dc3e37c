"""A CEL expression's syntax tree, read from what cel-expr-python serializes.

``Expression.serialize()`` gives a ``google.protobuf.Any`` holding a ``cel.expr.ParsedExpr``
(compiled with ``disable_check``) or ``cel.expr.CheckedExpr``. Only the syntax tree is read:
its nodes as in cel-spec's ``syntax.proto``, macros already expanded by the parser. The
protobuf wire format is read directly (a few dozen lines) rather than through the
``protobuf`` package, which nothing else here needs.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["literal", "ident", "select", "call", "list", "map", "struct", "comprehension"]

_PARSED = "type.googleapis.com/cel.expr.ParsedExpr"
_CHECKED = "type.googleapis.com/cel.expr.CheckedExpr"


@dataclass
class Expr:
    """One node. Fields not used by a kind stay at their defaults."""

    id: int
    kind: Kind
    value: object = None  # literal: None (null), bool, int, float, str, bytes; Unsigned for uint
    name: str = ""  # ident name, select field, call function
    operand: Expr | None = None  # select operand, call target
    test_only: bool = False
    args: list[Expr] = field(default_factory=list)  # call args, list elements
    entries: list[tuple[Expr, Expr]] = field(default_factory=list)  # map entries
    iter_var: str = ""
    iter_var2: str = ""
    iter_range: Expr | None = None
    accu_var: str = ""
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


class Unsigned(int):
    """A ``uint`` literal (``1u``), apart from an ``int`` one."""


class Unreadable(ValueError):
    """Bytes that are not a serialized CEL expression."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    if at < len(data) and data[at] < 0x80:  # most are one byte
        return data[at], at + 1
    shift = result = 0
    while True:
        if at >= len(data):
            raise Unreadable("truncated varint")
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, at
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) in order: varints and fixed64 as int, the rest as bytes."""
    out: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            out.append((number, value))
        elif wire == 1:
            out.append((number, int.from_bytes(data[at : at + 8], "little")))
            at += 8
        elif wire == 2:
            length, at = _varint(data, at)
            out.append((number, data[at : at + length]))
            at += length
        elif wire == 5:
            out.append((number, int.from_bytes(data[at : at + 4], "little")))
            at += 4
        else:
            raise Unreadable(f"wire type {wire}")
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _constant(data: bytes) -> object:
    for number, value in _fields(data):
        if number == 1:
            return None
        if number == 2:
            return bool(value)
        if number == 3:
            return _signed(int(value))
        if number == 4:
            return Unsigned(int(value))
        if number == 5:
            return struct.unpack("<d", int(value).to_bytes(8, "little"))[0]
        if number == 6:
            return bytes(value).decode()
        if number == 7:
            return bytes(value)
    raise Unreadable("constant without a value")


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise Unreadable("expected a message")
    return value


def _expr(data: bytes) -> Expr:
    node_id = 0
    node: Expr | None = None
    for number, value in _fields(data):
        if number == 2:
            node_id = int(value)
            continue
        body = _bytes(value)
        parts = _fields(body)
        if number == 3:
            node = Expr(0, "literal", value=_constant(body))
        elif number == 4:
            node = Expr(0, "ident", name=_text(parts, 1))
        elif number == 5:
            node = Expr(0, "select", operand=_child(parts, 1), name=_text(parts, 2))
            node.test_only = any(n == 3 and v for n, v in parts)
        elif number == 6:
            node = Expr(0, "call", operand=_child(parts, 1), name=_text(parts, 2))
            node.args = [_expr(_bytes(v)) for n, v in parts if n == 3]
        elif number == 7:
            node = Expr(0, "list", args=[_expr(_bytes(v)) for n, v in parts if n == 1])
        elif number == 8:
            node = _struct(parts)
        elif number == 9:
            node = Expr(
                0,
                "comprehension",
                iter_var=_text(parts, 1),
                iter_var2=_text(parts, 8),
                iter_range=_child(parts, 2),
                accu_var=_text(parts, 3),
                accu_init=_child(parts, 4),
                loop_condition=_child(parts, 5),
                loop_step=_child(parts, 6),
                result=_child(parts, 7),
            )
    if node is None:
        raise Unreadable(f"expression {node_id} without a kind")
    node.id = node_id
    return node


def _struct(parts: list[tuple[int, int | bytes]]) -> Expr:
    message = _text(parts, 1)
    node = Expr(0, "struct" if message else "map", name=message)
    for number, value in parts:
        if number != 2:
            continue
        entry = _fields(_bytes(value))
        key = _child(entry, 3)
        if key is None:
            key = Expr(0, "literal", value=_text(entry, 2))
        entry_value = _child(entry, 4)
        if entry_value is None:
            raise Unreadable("struct entry without a value")
        node.entries.append((key, entry_value))
    return node


def _text(parts: list[tuple[int, int | bytes]], number: int) -> str:
    for n, value in parts:
        if n == number:
            return _bytes(value).decode()
    return ""


def _child(parts: list[tuple[int, int | bytes]], number: int) -> Expr | None:
    for n, value in parts:
        if n == number:
            return _expr(_bytes(value))
    return None


def read(serialized: bytes) -> Expr:
    """The syntax tree of what ``Expression.serialize()`` returned."""
    envelope = _fields(serialized)
    type_url = _text(envelope, 1)
    body = next((_bytes(v) for n, v in envelope if n == 2), b"")
    expr_field = {_PARSED: 2, _CHECKED: 4}.get(type_url)
    if expr_field is None:
        raise Unreadable(f"not a CEL expression: {type_url!r}")
    tree = _child(_fields(body), expr_field)
    if tree is None:
        raise Unreadable("no expression")
    return tree
