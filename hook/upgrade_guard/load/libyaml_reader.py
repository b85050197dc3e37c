"""The faithful path of yaml_reader: libyaml (PyYAML's C parser, of which go-yaml v2 is a
port) with go-yaml v2's resolution, for the files the fast path leaves and for every error
message. Imported only then: most runs read every file on the fast path."""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.cyaml import CParser  # type: ignore[attr-defined]

from upgrade_guard.load.yaml_scalars import (
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    YamlError,
    resolve_plain,
)

_TAG = "tag:yaml.org,2002:"
_STR, _BINARY, _MERGE = _TAG + "str", _TAG + "binary", _TAG + "merge"
# Plain scalars that might not be strings get this tag from the resolver; explicit tags
# keep theirs, so the two can be told apart.
_PLAIN = "tag:upgrade-guard,2026:plain"
_FIRST = "+-0123456789.yYnNtTfFoO~<"
_INT64_MIN, _INT64_END = -(2**63), 2**63
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_TAG_RUNS_ON = frozenset(",[]")  # what go-yaml v2 scans into a tag and libyaml, in flow, not


class _Resolver(yaml.resolver.BaseResolver):
    pass


_Resolver.add_implicit_resolver(_PLAIN, re.compile(r"(?s).*"), [*_FIRST, ""])


class _Loader(CParser, _Resolver):
    def __init__(self, stream: bytes | str) -> None:
        CParser.__init__(self, stream)
        _Resolver.__init__(self)


def _where(node: yaml.Node | yaml.Token) -> str:
    return f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


def _scalar(node: yaml.ScalarNode) -> Any:
    tag, value = node.tag, node.value
    if tag == _STR:
        return value
    if tag == _PLAIN and not node.style:
        return resolve_plain(value)[1]
    if tag == _BINARY:
        try:
            decoded = base64.b64decode(value.replace("\n", "").replace("\r", ""), validate=True)
        except binascii.Error:
            raise YamlError(
                f"{_where(node)}: !!binary value contains invalid base64 data"
            ) from None
        return decoded.decode("utf-8", errors="replace")
    if not tag.startswith(_TAG):
        return value  # tags go-yaml cannot resolve leave the text as it is
    want = tag[len(_TAG) :]
    if want not in ("bool", "int", "float", "null", "timestamp"):
        return value
    kind, resolved = resolve_plain(value)
    if kind == want:
        return resolved
    if want == "float" and kind == "int":
        return float(resolved)
    if want == "timestamp" and kind == "timestamp":
        return value
    raise YamlError(f"{_where(node)}: cannot decode !!{kind} `{value}` as a !!{want}")


def _float_key(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32), as sigs.k8s.io/yaml writes float keys."""
    if math.isnan(value):
        return ".nan"
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        single = math.copysign(math.inf, value)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for precision in range(1, 10):
        text = f"{single:.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent_text = text.split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    exponent = int(exponent_text)
    if exponent < -4 or exponent >= 6:
        rest = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{rest}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _key(value: Any, node: yaml.Node) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and _INT64_MIN <= value < _INT64_END:
        return str(value)
    if isinstance(value, float):
        return _float_key(value)
    if isinstance(value, int):
        kind = "uint64"
    elif value is None:
        kind = "null"
    else:
        raise YamlError(f"{_where(node)}: a mapping key must be a scalar")
    raise YamlError(f"{_where(node)}: a {kind} mapping key cannot become JSON")


def _check_value(value: Any, node: yaml.Node) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise YamlError(f"{_where(node)}: {value} cannot be represented in JSON")


class _Builder:
    """Turns one document's node graph into plain data without recursion."""

    def __init__(self) -> None:
        self.built: dict[int, Any] = {}
        self.expanded: dict[int, int] = {}

    def build(self, root: yaml.Node) -> Any:
        if isinstance(root, yaml.ScalarNode):
            value = _scalar(root)
            _check_value(value, root)
            return value
        on_path: set[int] = set()
        stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
        while stack:
            node, depth, children_done = stack.pop()
            ident = id(node)
            if children_done:
                on_path.discard(ident)
                self._finish(node)
                continue
            if ident in self.built:
                continue
            if ident in on_path:
                raise YamlError(
                    f"{_where(node)}: alias refers to a node that contains it (a cycle)"
                )
            if depth > MAX_DEPTH:
                raise YamlError(f"{_where(node)}: nested deeper than {MAX_DEPTH} levels")
            on_path.add(ident)
            stack.append((node, depth, True))
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if not isinstance(key, yaml.ScalarNode):
                        stack.append((key, depth + 1, False))
                    if not isinstance(value, yaml.ScalarNode):
                        stack.append((value, depth + 1, False))
            else:
                stack.extend(
                    (child, depth + 1, False)
                    for child in node.value
                    if not isinstance(child, yaml.ScalarNode)
                )
        return self.built[id(root)]

    def _value(self, node: yaml.Node) -> tuple[Any, int]:
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node), 1
        ident = id(node)
        return self.built[ident], self.expanded[ident]

    def _finish(self, node: yaml.Node) -> None:
        size = 1
        result: Any
        if isinstance(node, yaml.SequenceNode):
            result = []
            for child in node.value:
                value, count = self._value(child)
                _check_value(value, child)
                result.append(value)
                size += count
        else:
            result = {}
            typed: dict[str, tuple[type, Any]] = {}  # each key's YAML value, by its JSON key
            for key_node, value_node in node.value:
                value, count = self._value(value_node)
                size += count
                if (
                    isinstance(key_node, yaml.ScalarNode)
                    and key_node.value == "<<"
                    and (key_node.tag == _MERGE or (key_node.tag == _PLAIN and not key_node.style))
                ):
                    self._merge(result, value_node, value, key_node)
                    continue
                _check_value(value, value_node)
                key, _ = self._value(key_node)
                name = _key(key, key_node)
                # go-yaml v2 keeps 1, 1.0 and "1" as three keys of one map, which
                # sigs.k8s.io/yaml then writes to the one JSON key "1" in Go's random map
                # order: Kubernetes reads either value.
                if typed.setdefault(name, (type(key), key)) != (type(key), key):
                    raise YamlError(
                        f"{_where(key_node)}: this key and an earlier one of its mapping both"
                        f' become "{name}" in JSON, and Kubernetes keeps either value'
                    )
                result[name] = value
        if size > MAX_EXPANDED_NODES:
            raise YamlError(
                f"{_where(node)}: aliases expand to more than {MAX_EXPANDED_NODES} nodes"
            )
        self.built[id(node)] = result
        self.expanded[id(node)] = size

    @staticmethod
    def _merge(result: dict[str, Any], node: yaml.Node, value: Any, key: yaml.Node) -> None:
        """go-yaml v2: merged keys override earlier ones; earlier list items win.

        An alias as the whole value must name a mapping: go-yaml v2 merges a sequence of
        mappings only when it is written in place. An alias's node is the anchored node,
        which always starts before the ``<<`` that refers to it.
        """
        aliased = node.start_mark.index < key.start_mark.index
        listed = isinstance(node, yaml.SequenceNode) and not aliased
        sources = list(reversed(value)) if listed else [value]
        for source in sources:
            if not isinstance(source, dict):
                raise YamlError(
                    f"{_where(key)}: map merge requires map or sequence of maps as the value"
                )
            result.update(source)


def describe(error: yaml.YAMLError, first_line: int = 0) -> str:
    """One line for a libyaml error: where (lines counted from first_line) and what."""
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        where = f"line {first_line + mark.line + 1}, column {mark.column + 1}: " if mark else ""
        return f"{where}{error.problem or error}"
    return str(error).splitlines()[0]


def _refuse_what_go_yaml_reads_otherwise(data: bytes | str) -> None:
    """go-yaml v2 refuses the escape "\\/" in a double-quoted scalar, where libyaml reads
    "/"; and it reads "," "[" "]" right after a tag into the tag, in flow context too, where
    libyaml ends the tag (``[!x,a]``: go-yaml's tag "!x,a", or its error)."""
    if isinstance(data, bytes):
        bom16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        text = data.decode("utf-16" if bom16 else "utf-8-sig")
    else:
        text = data
    if "\\/" not in text and "!" not in text:
        return
    scanner = CParser(data)
    try:
        while scanner.check_token():
            token = scanner.get_token()
            if (
                isinstance(token, yaml.TagToken)
                and text[token.end_mark.index : token.end_mark.index + 1] in _TAG_RUNS_ON
            ):
                raise YamlError(f"{_where(token)}: a tag ends where go-yaml v2 reads on into it")
            if not isinstance(token, yaml.ScalarToken) or token.style != '"':
                continue
            raw = text[token.start_mark.index : token.end_mark.index]
            if any(escape == "/" for escape in _ESCAPE.findall(raw)):
                raise YamlError(
                    f'{_where(token)}: found unknown escape character "/" in a quoted scalar'
                )
    except yaml.YAMLError:
        return  # the loader reports it
    finally:
        scanner.dispose()


def read_documents(data: bytes | str) -> Iterator[tuple[int, Any]]:
    """(first line, value) for each document of a YAML stream, read by libyaml."""
    _refuse_what_go_yaml_reads_otherwise(data)
    loader = _Loader(data)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node.start_mark.line + 1, _Builder().build(node)
    except yaml.YAMLError as error:
        raise YamlError(describe(error)) from None
    finally:
        loader.dispose()
