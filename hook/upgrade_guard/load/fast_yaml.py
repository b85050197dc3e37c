"""A fast path for yaml_reader: rapidyaml parses, emits JSON, orjson reads it back.

rapidyaml follows YAML 1.2 and Kubernetes reads YAML 1.1 the go-yaml v2 way, so this path is
only taken where the two provably read the same. A document it may not read goes to the
faithful libyaml path the caller gives, alone (a stream's documents share no anchor, and
directives and ``...`` send the whole stream there); what the stream as a whole rules out,
or a document libyaml refuses, makes ``read_fast`` return None, and the caller reads the
whole stream the faithful way, whose error names the line. The reasoning:

- Quoted and block scalars are strings in both. rapidyaml's JSON keeps them strings,
  except that it rewrites infinities and NaNs (even a plain ``inf``) as ``".inf"``,
  ``"-.inf"``, ``".nan"``: a file where those show takes the faithful path.
- Escapes: a double-quoted scalar may hold only escapes from a list that both decode the
  same (``_KNOWN_ESCAPE``; go-yaml v2 refuses ``\\/`` and surrogate code points, which
  rapidyaml reads). Every place a double-quoted scalar may open is looked at; any other
  backslash in one sends the file to the faithful path, whatever the escape is.
- A plain scalar that Kubernetes reads as a string (``differs`` is false for it) is that
  same string in rapidyaml's JSON. rapidyaml writes a plain scalar as a bare JSON number
  or literal only where it is a decimal number (no hex, octal or ``_``: those stay strings)
  or true/false/null; Go reads the same number (checked when reading the JSON: out of
  int64/uint64 or float64 range, go-yaml v2 differs, so faithful path).
- A plain scalar that Kubernetes reads as something else (``on``, ``010``, ``~``, ``1_000``,
  ``<<``...) has no space, quote or escape in it, so it shows in the JSON as ``"text"``. Every
  such string is looked for in the source at a place where a plain scalar could stand; if
  it might stand there, the tree says whether it is plain, and if so the file takes the
  faithful path (a quoted ``"on"`` is no reason to).
- rapidyaml takes some YAML libyaml (and so go-yaml v2, its port) refuses: plain scalars
  starting with ``@`` `` ` `` ``%`` ``]`` ``}`` ``,`` (or ``:`` ``?`` in flow), empty keys,
  implicit keys longer than 1024 characters or over two lines (quoted in block context,
  any in a flow collection over two lines).
  Where the text shows these might be there, the tree is asked; if so, faithful path.
- Anchors, aliases, tags, directives, ``...``, tabs, CR, control or non-printable
  characters, BOMs, non-UTF-8 bytes, empty or non-mapping documents, content on a ``---``
  line, nesting deeper than max_depth (or than rapidyaml's emitter goes, 64), and
  anything rapidyaml refuses: all take the faithful path, which also gives the error
  message.

Every check over-approximates from the text first (cheap byte searches) and looks at
rapidyaml's tree only where the text cannot rule a case out, each in time linear in the
document. Tests compare this path with the faithful one over the corpus and over generated
YAML, and both with helm's own reader.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from upgrade_guard.load.json_reader import may_hold_long_integer

try:
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - rapidyaml has wheels for the platforms we run on
    ryml = None

_KEY_NOT_PLAIN = (
    (ryml.KEY_SQUO | ryml.KEY_DQUO | ryml.KEY_LITERAL | ryml.KEY_FOLDED) if ryml is not None else 0
)
_VAL_NOT_PLAIN = (
    (ryml.VAL_SQUO | ryml.VAL_DQUO | ryml.VAL_LITERAL | ryml.VAL_FOLDED) if ryml is not None else 0
)
_SPECIAL_NODE = (
    (ryml.KEYANCH | ryml.VALANCH | ryml.KEYREF | ryml.VALREF | ryml.KEYTAG | ryml.VALTAG)
    if ryml is not None
    else 0
)
# Bytes libyaml refuses or treats specially (tab, CR, C0 controls, DEL) are what is left
# after deleting every other byte; non-ASCII is looked at separately.
_ORDINARY_BYTES = bytes([10, *range(32, 127), *range(128, 256)])
# Non-ASCII characters libyaml refuses or reads as line breaks: C1 controls (NEL), BOM,
# U+FFFE/U+FFFF, U+2028/U+2029.
_ODD_UNICODE = re.compile("[\x80-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_MARKER = re.compile(rb"\n---(?=[ \n]|\Z)")
_FIRST_MARKER = re.compile(rb"---(?=[ \n]|\Z)")
_MARKER_LINE = re.compile(rb"---[ ]*(?:#[^\n]*)?(?:\n|\Z)")
_CONTENT_LINE = re.compile(rb"(?m)^[ ]*[^ #\n]")
# A JSON string whose text might be read as something else than a string by Kubernetes:
# what go-yaml v2 may resolve starts with one of these characters and has no space, quote
# or escape (a superset; ``differs`` decides).
_CANDIDATE = re.compile(rb'"([-+0-9.yYnNtTfFoO~<][0-9a-zA-Z_.+<-]*)"')
_MARGIN_AS_SPACES = bytes.maketrans(b"?-", b"  ")
# rapidyaml's JSON writes infinities and NaNs (inf, -Infinity, .NaN...) as these strings.
_REWRITTEN = frozenset({".inf", "-.inf", "+.inf", ".nan"})
# A JSON string (or key) starting with what no plain scalar may start with, or an empty
# key: an opening quote follows one of "[ { , :" and white space, a closing one never does
# (an empty key after "[" or ":" is not JSON). One pattern led by one class, without
# backtracking into the white space, searches several times faster than two alternatives.
_ODD_STRING = re.compile(rb'[\[{,:](?>[ \n]*)"(?:[@`%\]},:?]|":)')
# What a plain scalar may not start with where libyaml reads it.
_ODD_FIRST = frozenset(b"@`%:?]},")
_LONG = 1000
_MAX_SEARCHES = 64
_LONG_LINE = re.compile(rb"\n[^\n]{%d}" % _LONG)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# ":" ending a key in block context; ":" where a node starts (an empty key). Several
# patterns, each led by a literal, search much faster than one.
_KEY_COLON = re.compile(rb" *:(?=[ \n]|\Z)")
_EMPTY_KEY = tuple(
    re.compile(rb"%s *:(?=[ \n]|\Z)" % start) for start in (rb"\A", rb"\n", rb"-", rb":", rb"\?")
)
_QUOTED = re.compile(rb'"[^"]*"')
_NOT_QUOTES_OR_BRACKETS = bytes(b for b in range(256) if b not in b'"[]{}')
# What may come before a node (after spaces): a line break or ": ? -", and in flow context
# also "[ { ,". Without a flow collection in a file, the latter cannot start a node.
_BLOCK_BEFORE = frozenset(b"\n:?-")
_ANY_BEFORE = frozenset(b"\n:?-[{,")
# How a block scalar's header ends, without an indentation indicator or a comment.
_BLOCK_HEADERS = (b" |", b" |-", b" |+", b" >", b" >-", b" >+")
_INT64_MIN, _UINT64_END = -(2**63), 2**64
# The escapes rapidyaml decodes as go-yaml v2 does (held to helm's reader in tests/load):
# a double-quoted scalar with any other (go-yaml v2 refuses "\/" and surrogate code points,
# which rapidyaml reads) sends the file to libyaml.
_KNOWN_ESCAPE = re.compile(
    rb"\\(?:[\\\"ntrbf _NLP]|x[0-9a-fA-F]{2}"
    rb"|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"
    rb"|U000(?!0[dD][89a-fA-F])[0-9a-fA-F]{5}|U0010[0-9a-fA-F]{4})"
)


class _Fallback(Exception):
    pass


def _parse_int(text: str) -> int:
    # JSON integer syntax is decimal without leading zeros: Go's ParseInt/ParseUint read it
    # the same while it fits; beyond that go-yaml v2 makes it a float.
    value = int(text)
    if not _INT64_MIN <= value < _UINT64_END:
        raise _Fallback
    return value


def _parse_float(text: str) -> float:
    # JSON number syntax is inside go-yaml v2's float syntax and both round correctly;
    # out of range Go's ParseFloat fails (the scalar stays a string), Python gives inf.
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Fallback
    return value


def _parse_constant(text: str) -> Any:
    raise _Fallback


def _node_starts(source: bytes, indicators: bytes, before: frozenset[int]) -> Iterator[int]:
    """Where one of indicators follows a character in before (or the start), spaces apart."""
    for indicator in indicators:
        at = source.find(indicator)
        while at != -1:
            back = at - 1
            while back >= 0 and source[back] == 0x20:
                back -= 1
            if back < 0 or source[back] in before:
                yield at
            at = source.find(indicator, at + 1)


def _starts(source: bytes, indicators: bytes, before: frozenset[int], limit: int) -> int:
    """How many _node_starts there are, counting up to limit."""
    found = 0
    for _ in _node_starts(source, indicators, before):
        found += 1
        if found >= limit:
            break
    return found


def _may_start(source: bytes, indicators: bytes, before: frozenset[int]) -> bool:
    return next(_node_starts(source, indicators, before), None) is not None


def _flow_lines(source: bytes) -> Iterator[bytes]:
    """From the first place a flow collection may start on a line to the end of the line,
    once per line."""
    line_end = -1
    for at in sorted(_node_starts(source, b"[{", _ANY_BEFORE)):
        if at < line_end:
            continue
        line_end = source.find(b"\n", at)
        if line_end == -1:
            line_end = len(source)
        yield source[at:line_end]


def _multiline_flow_possible(source: bytes) -> bool:
    """Whether a flow collection might go on past its line (over-approximated): libyaml
    refuses implicit keys over two lines there, rapidyaml does not."""
    for rest in _flow_lines(source):
        if b'"' in rest or b"'" in rest or b"#" in rest:
            return True
        depth = 0
        for bracket in rest.translate(None, _NOT_BRACKETS):
            depth += 1 if bracket in b"[{" else -1
            if depth < 0:
                return True
        if depth:
            return True
    return False


def _odd_start(source: bytes, flow: bool) -> bool:
    """Whether a node might start with a reserved indicator (@ `), a directive's %, a
    flow indicator (] } , in block context, : ? in flow) or an empty key's ":", all of which
    libyaml refuses. In flow context "[ { ," come before a
    node too; flow collections that go past their line are refused on their own."""
    if any(_node_may_open(source, at) for at in _node_starts(source, b"@`%]},", _BLOCK_BEFORE)):
        return True
    if any(pattern.search(source) for pattern in _EMPTY_KEY):
        return True
    return flow and any(_may_start(line, b"@`%:?", _ANY_BEFORE) for line in _flow_lines(source))


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" "))


def _in_block_scalar(source: bytes, start: int) -> bool:
    """Whether the line at start is a line of a block scalar's text (under-approximated):
    the nearest line above indented less ends with a block scalar's header ("|", ">",
    chomping but no indentation indicator, no comment) and the first line after it that
    holds more than spaces is indented as this one, more than where the header's line
    holds its node. Where that line above is itself text of a block scalar, a multi-line
    scalar or a quoted one, this line is text of the same."""
    end = source.find(b"\n", start)
    indent = _indent(source[start : len(source) if end == -1 else end])
    first = indent
    while start:
        above = source.rfind(b"\n", 0, start - 1) + 1
        line = source[above : start - 1]
        start = above
        if not line.strip(b" "):
            continue
        if _indent(line) >= indent:
            first = _indent(line)
            continue
        header = line.rstrip(b" ")
        if b"#" in header or not header.endswith(_BLOCK_HEADERS):
            return False
        node = len(header) - len(header.lstrip(b" -?:"))
        return first == indent > node
    return False


def _node_may_open(source: bytes, at: int) -> bool:
    """Whether a node might open at source[at] (over-approximated), found after spaces and
    one of _BLOCK_BEFORE or the start: not on a line of a block scalar's text. First on its
    line, it opens an implicit key (a ":" follows on the line) or the value of the last line
    holding more than spaces or a comment, which then ends with an indicator or a comment.
    Most such places in real CRDs are lines of descriptions, which pass neither."""
    start = source.rfind(b"\n", 0, at) + 1
    if _in_block_scalar(source, start):
        return False
    if source[start:at].strip(b" "):
        return True  # after an indicator on its line
    end = source.find(b"\n", at)
    if source.find(b":", at, len(source) if end == -1 else end) != -1:
        return True
    while start:
        above = source.rfind(b"\n", 0, start - 1) + 1
        line = source[above : start - 1].strip(b" ")
        if line and not line.startswith(b"#"):
            return line[-1] in _BLOCK_BEFORE or b"#" in line
        start = above
    return True


def _long_key_possible(source: bytes) -> bool:
    """Whether a ":" stands 1000 or more characters into a line (libyaml refuses an
    implicit key whose ":" is more than 1024 characters after its start)."""
    end = source.find(b"\n")
    if (end if end != -1 else len(source)) > _LONG and source.find(b":", _LONG, end) != -1:
        return True
    for match in _LONG_LINE.finditer(source):
        start = match.start() + 1
        end = source.find(b"\n", start)
        if source.find(b":", start + _LONG, end if end != -1 else len(source)) != -1:
            return True
    return False


def _plain_may_stand(source: bytes, text: str, before: frozenset[int]) -> bool:
    """Whether text could be a plain scalar somewhere in source (over-approximated).

    A plain scalar stands where a node may start (see before) and the texts looked for here
    end the line or are followed by spaces and one of ``# , ] } :``.
    """
    after = re.compile(re.escape(text.encode()) + rb"[ ]*(?:[#,\]}:\n]|\Z)")
    for match in after.finditer(source):
        back = match.start() - 1
        while back >= 0 and source[back] == 0x20:
            back -= 1
        if back < 0 or source[back] in before:
            return True
    return False


def _too_deep(source: bytes, emitted: bytes | bytearray, flow: bool, max_depth: int) -> bool:
    """Whether the document nests containers deeper than max_depth.

    A cheap bound comes from the source first (node properties are ruled out on this
    path). Going one level deeper moves a block collection's first key or "-" to the
    right, except for a sequence right under a mapping key ("indentless"), which is always
    followed by a step right. So a block collection at depth d starts at column
    (d - 1) / 2 or more, and what stands left of it on its line is indentation and the
    "- " or "? " of enclosing block collections: if no line starts with k such characters,
    block collections nest at most 2k - 1 deep. Flow collections (never holding block
    ones) add at most the number of places where a "[" or "{" could start one. Where the
    bound is not enough, the brackets of the emitted JSON are counted.
    """
    flows = _starts(source, b"[{", _ANY_BEFORE, max_depth) if flow else 0
    margin = (max_depth - flows + 1) // 2
    if margin > 0:
        spaced = b"\n" + source.translate(_MARGIN_AS_SPACES)
        if b"\n" + b" " * margin not in spaced:
            return False
    # Drop escaped backslashes, then escaped quotes: the quotes left delimit strings.
    text = emitted
    if b"\\" in text:
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _QUOTED.sub(b"", text.translate(None, _NOT_QUOTES_OR_BRACKETS))
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = brackets.replace(b"{}", b"").replace(b"[]", b"")
    return bool(brackets)


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml prints its errors on file descriptor 2; libyaml reports them instead."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _plain_in_tree(tree: Any, texts: set[str], odd: bool) -> bool:
    """Whether a scalar of the tree that is neither quoted nor a block scalar is in texts,
    or (if odd) starts with a character libyaml refuses there or is an empty key. (The
    walk calls rapidyaml's functions themselves: its methods add a call per node.)"""
    node_type, node_key, node_val = ryml._ryml.Tree_type, ryml._ryml.Tree_key, ryml._ryml.Tree_val
    lengths = {len(text.encode()) for text in texts}
    for node in range(tree.size()):
        flags = node_type(tree, node)
        if flags & ryml.KEY and not flags & _KEY_NOT_PLAIN:
            view = node_key(tree, node)
            if not view:
                if odd:
                    return True
            elif (odd and view[0] in _ODD_FIRST) or (
                len(view) in lengths and bytes(view).decode() in texts
            ):
                return True
        if flags & ryml.VAL and not flags & _VAL_NOT_PLAIN:
            view = node_val(tree, node)
            if view and (
                (odd and view[0] in _ODD_FIRST)
                or (len(view) in lengths and bytes(view).decode() in texts)
            ):
                return True
    return False


def _closing_quote(source: bytes, opening: int) -> int:
    """Where the quoted scalar opened at source[opening] closes, or -1."""
    quote = source[opening]
    at = opening + 1
    while True:
        at = source.find(quote, at)
        if at == -1:
            return -1
        if quote == 0x27:  # single quotes: '' is a quote inside
            if source[at + 1 : at + 2] == b"'":
                at += 2
                continue
            return at
        slashes = at - 1
        while source[slashes] == 0x5C:
            slashes -= 1
        if (at - 1 - slashes) % 2 == 0:  # not escaped
            return at
        at += 1


def _quoted_scalar_for_libyaml(source: bytes) -> bool:
    """Whether a quoted scalar might be an implicit key over two lines (libyaml refuses
    it, rapidyaml does not), or a double-quoted one might hold an escape other than
    _KNOWN_ESCAPE. A quoted scalar opens where a node may start (node properties are
    ruled out separately); if it closes on a later line and a ":" follows (block context),
    it may be such a key. In flow context the collection would go past its line, which is
    refused on its own."""
    for opening in _node_starts(source, b"\"'", _ANY_BEFORE):
        closing = _closing_quote(source, opening)
        if closing == -1:
            continue
        if source.find(b"\n", opening, closing) != -1 and _KEY_COLON.match(source, closing + 1):
            return True
        if (
            source[opening] == 0x22
            and source.find(b"\\", opening, closing) != -1
            and b"\\" in _KNOWN_ESCAPE.sub(b"", source[opening:closing])
        ):
            return True
    return False


def _read_one(piece: bytes, max_depth: int, differs: Any) -> Any:
    # A block scalar the stream ends in without a line break: rapidyaml ends its value with
    # one where "|" or ">" keeps its final line break, go-yaml and libyaml do not.
    if not piece.endswith(b"\n") and (b"|" in piece or b">" in piece):
        raise _Fallback
    with _quiet_stderr():
        tree = ryml.parse_in_arena(piece)
    if not tree.is_map(tree.root_id()):
        raise _Fallback
    # A flow collection starts where a block node may; anchors, aliases and tags (node
    # properties) start where any node may. The text tells where these cannot be; where
    # they might, the tree says.
    flow = _may_start(piece, b"[{", _BLOCK_BEFORE)
    # In flow context "[ { ," come before a node too: only on the lines where a flow
    # collection may start (one going past its line is refused on its own, below).
    flow_lines = list(_flow_lines(piece)) if flow else []
    # libyaml refuses keys longer than 1024 characters or over two lines.
    if _long_key_possible(piece) or _quoted_scalar_for_libyaml(piece):
        raise _Fallback
    properties = _may_start(piece, b"&*!", _BLOCK_BEFORE) or any(
        _may_start(line, b"&*!", _ANY_BEFORE) for line in flow_lines
    )
    special = _SPECIAL_NODE if properties else 0
    if flow and _multiline_flow_possible(piece):
        special |= ryml.FLOW_ML
    if special:
        node_type = ryml._ryml.Tree_type
        for node in range(tree.size()):
            if node_type(tree, node) & special:
                raise _Fallback
    with _quiet_stderr():  # deeper than rapidyaml's emitter goes (64): libyaml's turn
        # Into a buffer of ours: ryml.emit_json's own buffer is never freed (0.15.2).
        encoded = bytearray(len(piece) + len(piece) // 4 + 4096)
        failed, size = ryml.emit_json_to_substr(tree, tree.root_id(), encoded)
        if failed:
            encoded = bytearray(size)
            failed, size = ryml.emit_json_to_substr(tree, tree.root_id(), encoded)
            if failed:
                raise _Fallback
        del encoded[size:]
    candidates = {found.decode() for found in set(_CANDIDATE.findall(encoded))}
    if candidates & _REWRITTEN:
        raise _Fallback
    risky = set()
    differing = [text for text in candidates if differs(text)]
    if len(differing) > _MAX_SEARCHES:  # each is a search of the source: keep it linear
        raise _Fallback
    for text in differing:
        if text.encode() not in piece:  # not the source's text: leave it to libyaml
            raise _Fallback
        if _plain_may_stand(piece, text, _BLOCK_BEFORE) or any(
            _plain_may_stand(line, text, _ANY_BEFORE) for line in flow_lines
        ):
            risky.add(text)
    # libyaml refuses plain scalars starting with @ ` % and empty keys.
    odd = _odd_start(piece, flow) and _ODD_STRING.search(encoded) is not None
    if (risky or odd) and _plain_in_tree(tree, risky, odd):
        raise _Fallback
    del tree
    if _too_deep(piece, encoded, flow, max_depth):
        raise _Fallback
    # orjson reads numbers as json does (load/json_reader.py) but makes an integer beyond
    # int64 or uint64 a float where go-yaml v2 differs, and refuses a number beyond float64:
    # json's hooks tell those (any has 19 digits or more).
    if not may_hold_long_integer(encoded):
        try:
            return orjson.loads(encoded)
        except orjson.JSONDecodeError:
            pass
    return json.loads(
        encoded,
        parse_int=_parse_int,
        parse_float=_parse_float,
        parse_constant=_parse_constant,
    )


def read_fast(
    data: bytes | str,
    max_depth: int,
    differs: Any,
    faithful: Callable[[bytes], Any] | None = None,
) -> list[tuple[int, Any]] | None:
    """(first line, value) per document, or None where the faithful path must read it.

    differs(text) tells whether Kubernetes reads the plain scalar text as anything but the
    string text. faithful(document), where given, reads one document this path may not
    (documents of a stream are read apart: no anchor, tag or directive reaches across);
    where it fails, the stream is the faithful path's, whose message names its line.
    """
    if ryml is None:
        return None
    try:
        source = data.encode() if isinstance(data, str) else data
        if not source.isascii() and _ODD_UNICODE.search(source.decode()):
            return None
    except UnicodeError:
        return None
    if source.translate(None, _ORDINARY_BYTES):
        return None
    if source.startswith((b"%", b"...")) or b"\n%" in source or b"\n..." in source:
        return None  # directives and document end markers
    starts = [m.start() + 1 for m in _MARKER.finditer(source)]
    if _FIRST_MARKER.match(source):
        starts.insert(0, 0)
    bounds = [(start, True) for start in starts]
    if not starts or starts[0] != 0:
        bounds.insert(0, (0, False))
    documents: list[tuple[int, Any]] = []
    line, counted = 1, 0
    try:
        for index, (start, marked) in enumerate(bounds):
            end = bounds[index + 1][0] if index + 1 < len(bounds) else len(source)
            piece = source[start:end]
            body_at = 0
            if marked:
                marker = _MARKER_LINE.match(piece)
                if marker is None:  # content after ---
                    return None
                body_at = marker.end()
            content = _CONTENT_LINE.search(piece, body_at)
            if content is None:
                if marked:  # an empty document: rare, leave it to libyaml
                    return None
                continue
            line += source.count(b"\n", counted, start + content.start())
            counted = start + content.start()
            try:
                value = _read_one(piece[body_at:], max_depth, differs)
            except _Fallback:
                if faithful is None:
                    return None
                value = faithful(piece[body_at:])
            documents.append((line, value))
    except (_Fallback, RecursionError, ValueError, RuntimeError):
        return None
    except Exception as error:
        if ryml is not None and isinstance(error, ryml.ExceptionBasic):
            return None
        raise
    return documents
