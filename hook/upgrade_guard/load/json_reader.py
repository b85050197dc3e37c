"""JSON read the way Kubernetes reads it: Go's encoding/json, as the apiserver decodes bodies.

kubectl and helm's kube client decide by content (apimachinery's YAMLOrJSONDecoder): a stream
whose first non-space character is ``{`` is a sequence of JSON values; where one is not
valid JSON, that value and everything after it are read as YAML. Where Python's ``json``
and Go's decoder differ, Go's reading is followed (each case is held to kubectl and the real
apiserver by tests/load and tests/cluster):

- a duplicate key: the last one wins (the apiserver warns and stores the last);
- an integer beyond int64 is a float64 (``1e3`` is the float 1000.0, as in YAML);
- a number beyond float64 (``1e400``) is refused; ``NaN`` and ``Infinity`` are not JSON;
- invalid UTF-8 is replaced by U+FFFD byte by byte, a lone surrogate escape (``"\\ud800"``)
  by one U+FFFD, as Go's ``unquote`` does;
- nesting deeper than max_depth is refused, as the YAML reader refuses it.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import orjson

_INT64_MIN, _INT64_END = -(2**63), 2**63
# Only a number of 19 digits or more can be an integer beyond int64; without one the default
# (faster) integer reading is Go's. Numbers are found as runs of "0" between the brackets,
# commas and colons outside strings, after mapping digits to "0".
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
# A \u escape of a surrogate: only then can a string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACE = re.compile(r"[ \t\n\r]*")
_SPACE_BYTES = re.compile(rb"[ \t\n\r]*")
# The escapes _scan drops first: an escaped quote or backslash could be taken for a string's
# end or another escape's start (the other escapes hold only characters it drops anyway), and
# the start of a \u escape tells whether a string may hold a lone surrogate.
_ESCAPE_SEEN = re.compile(rb'\\[\\"u]')
_NOT_SCANNED = bytes(b for b in range(256) if b not in b'[]{}",:0123456789')


class JsonError(ValueError):
    """JSON Kubernetes would refuse; the message says where."""


def _go_replace(error: UnicodeError) -> tuple[str, int]:
    # Go's utf8.DecodeRune consumes one byte of an invalid sequence; Python's "replace"
    # would take the longest invalid prefix as one.
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\ufffd", error.start + 1


codecs.register_error("upgrade-guard-go-utf8", _go_replace)


def _go_text(data: bytes) -> tuple[str, bool]:
    """data as Go reads a JSON body (UTF-8, each invalid byte one U+FFFD), and whether it
    was valid UTF-8."""
    try:
        return data.decode(), True
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="upgrade-guard-go-utf8"), False


def starts_as_json(data: bytes) -> bool:
    """Whether Kubernetes reads data as JSON: its first non-space character is ``{``."""
    return data.lstrip()[:1] == b"{"


def _go_int(text: str) -> int | float:
    value = int(text)
    return value if _INT64_MIN <= value < _INT64_END else float(value)


def _go_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonError(f"cannot read the number {text} as a float64")
    return value


def _not_json(text: str) -> Any:
    # Python's json reads NaN and Infinity; for Go they are not JSON (so YAML reads them).
    raise json.JSONDecodeError(f"{text} is not JSON", text, 0)


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    return value


class _Scan(NamedTuple):
    """What one pass over valid JSON tells before it is parsed."""

    too_deep: bool  # arrays and objects nested more than max_depth deep
    long_number: bool  # a number of 19 digits or more: maybe an integer beyond int64
    unicode_escape: bool  # a \\u escape: a string may hold a lone surrogate


def _scan(json_text: bytes, max_depth: int) -> _Scan:
    escapes: set[bytes] = set()

    def dropped(escape: re.Match[bytes]) -> bytes:
        escapes.add(escape[0])
        return b""

    if b"\\" in json_text:
        json_text = _ESCAPE_SEEN.sub(dropped, json_text)
    # What is left between quotes is strings: every other piece. Many strings hold no
    # bracket or digit and are "" by now; dropping each "" first keeps the pieces few (a
    # dropped closing and opening quote only joins two strings: every piece keeps its side).
    outside = json_text.translate(_DIGITS_AS_ZERO, _NOT_SCANNED).replace(b'""', b"")
    if b'"' in outside:
        outside = b"".join(outside.split(b'"')[::2])
    long_number = _LONG_DIGITS in outside
    brackets = outside.translate(None, b"0,:")
    for _ in range(max_depth):
        if not brackets:
            break
        brackets = brackets.replace(b"{}", b"").replace(b"[]", b"")
    return _Scan(bool(brackets), long_number, b"\\u" in escapes)


def may_hold_long_integer(json_text: bytes | bytearray) -> bool:
    """Whether JSON text may hold an integer beyond int64 (19 digits or more), in a string or
    not."""
    return _LONG_DIGITS in json_text.translate(_DIGITS_AS_ZERO)


def _decoder(long_number: bool) -> Callable[[str, int], tuple[Any, int]]:
    return json.JSONDecoder(
        parse_int=_go_int if long_number else None,
        parse_float=_go_float,
        parse_constant=_not_json,
    ).raw_decode


def _read_values(text: str, long_number: bool, max_depth: int) -> tuple[list[tuple[int, Any]], int]:
    """(first line, value) for each JSON value at the start of text, and where the first
    one that is not valid JSON starts (len(text) when all are)."""
    decode = _decoder(long_number)
    values: list[tuple[int, Any]] = []
    at = _SPACE.match(text).end()  # type: ignore[union-attr]
    line = 1 + text.count("\n", 0, at)
    while at < len(text):
        try:
            value, end = decode(text, at)
        except json.JSONDecodeError:
            return values, at
        except RecursionError:
            raise JsonError(f"line {line}: nested deeper than {max_depth} levels") from None
        except JsonError as error:
            raise JsonError(f"line {line}: {error}") from None
        values.append((line, value))
        following = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        line += text.count("\n", at, following)
        at = following
    return values, at


def _one_value(data: bytes) -> tuple[int, Any] | None:
    """(first line, value) where data is one JSON value that orjson reads, else None.

    orjson reads JSON as ``json`` does here (numbers correctly rounded, the last of duplicate
    keys) in about 60% of its time, and refuses what Go reads otherwise: invalid
    UTF-8, a lone surrogate escape, a number beyond float64, NaN. It keeps an integer up to
    uint64 where Go has a float64, so none of 19 digits or more may be there (``_Scan``)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    start = _SPACE_BYTES.match(data).end()  # type: ignore[union-attr]
    return 1 + data.count(b"\n", 0, start), value


def read_stream(
    data: bytes, max_depth: int, read_yaml: Callable[[bytes], Iterator[tuple[int, Any]]]
) -> Iterator[tuple[int, Any]]:
    """(first line, value) per document of a stream that starts as JSON: the JSON values,
    then, from the first value that is not valid JSON, read_yaml's documents of the rest."""
    # Checked before anything is parsed, so that its copies of data are gone by the time
    # the values take their memory; a stream that turns to YAML is checked again below.
    scan = _scan(data, max_depth)
    whole = None if scan.too_deep or scan.long_number else _one_value(data)
    if whole is not None:
        yield whole
        return
    text, utf8 = _go_text(data)
    values, rest_at = _read_values(text, scan.long_number, max_depth)
    if rest_at < len(text):
        scan = _scan(text[:rest_at].encode(), max_depth)
    if scan.too_deep:
        raise JsonError(f"nested deeper than {max_depth} levels")
    if scan.unicode_escape and _SURROGATE_ESCAPE.search(text):
        values = [(line, _without_surrogates(value)) for line, value in values]
    yield from values
    if rest_at == len(text):
        return
    if not utf8:  # the YAML reader refuses what is not UTF-8
        raise JsonError("not UTF-8 text, and not all of it JSON")
    offset = text.count("\n", 0, rest_at)
    for line, value in read_yaml(text[rest_at:].encode()):
        yield line + offset, value
