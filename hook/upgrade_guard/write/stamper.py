"""Write annotations into CRD files as text, leaving every other byte where it was.

The file is never re-serialized. libyaml's event stream locates, in each CRD document, the
``metadata`` mapping, its ``annotations`` and the annotation entries, with their character
offsets; the stamper then replaces the value of an annotation that must change, and inserts
the lines of the ones that are missing:

- block style: missing entries go before the first existing annotation, at its indentation;
  without ``annotations`` the key is created before the first key of ``metadata``, at that
  key's indentation, its entries one indentation step deeper (the step the file uses from
  ``metadata`` to its keys);
- flow style (``{...}``, JSON files): entries are written as ``"key": "value"`` before the
  first entry, or inside an empty ``{}``;
- a changed value keeps its quotes when it was single- or double-quoted, and is written
  double-quoted otherwise (an annotation value must be a string, and ``3`` is a number);
- line endings follow the line the text goes into (``\\n`` or ``\\r\\n``).

Comments, key order, quoting, anchors elsewhere, other documents and non-CRD documents are
untouched. What cannot be edited safely (a block scalar value, an aliased or anchored
``metadata``/``annotations``, a CRD inside a ``List``) is refused with StampError, never
guessed at. After editing, the result is read back and checked.

Pure: ``stamp_text`` maps text to text; ``write_file`` is the file edge.
It lives in load/ because it reads YAML (libyaml events), the one layer allowed to.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.cyaml import CParser  # type: ignore[attr-defined]

from upgrade_guard.load import helm_template, libyaml_reader
from upgrade_guard.load.yaml_reader import read_documents
from upgrade_guard.load.yaml_scalars import YamlError
from upgrade_guard.manifests import ADMISSION_GROUP, WEBHOOK_KINDS

_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*\Z")


class StampError(ValueError):
    """A file the stamper cannot edit without risking other bytes; the message says where."""


@dataclass
class _Scalar:
    value: str
    style: str
    start: int
    end: int
    line: int
    column: int
    anchored: bool = False


@dataclass
class _Node:
    """A value: a scalar, or a mapping with its entries, or something stamp never edits."""

    kind: str  # "scalar", "mapping", "other"
    start: int
    end: int
    flow: bool = False
    anchored: bool = False
    scalar: _Scalar | None = None
    entries: list[tuple[_Scalar, _Node]] = field(default_factory=list)

    def entry(self, key: str) -> _Node | None:
        found = [value for name, value in self.entries if name.value == key]
        return found[0] if found else None

    def key(self, key: str) -> _Scalar | None:
        found = [name for name, _ in self.entries if name.value == key]
        return found[0] if found else None


@dataclass
class _Document:
    api_version: str | None = None
    kind: str | None = None
    metadata_key: _Scalar | None = None
    metadata: _Node | None = None

    @property
    def is_crd(self) -> bool:
        return self.kind == "CustomResourceDefinition" and (self.api_version or "").startswith(
            "apiextensions.k8s.io/"
        )

    @property
    def key(self) -> str | None:
        """How stamp names what it stamps: a CRD by its name, a webhook configuration as
        ``KIND NAME`` (a Validating and a Mutating one often share a name); None for every
        other document."""
        if self.name is None:
            return None
        if self.is_crd:
            return self.name
        webhook = self.kind in WEBHOOK_KINDS and (self.api_version or "").startswith(
            ADMISSION_GROUP + "/"
        )
        return f"{self.kind} {self.name}" if webhook else None

    @property
    def name(self) -> str | None:
        if self.metadata is None or self.metadata.kind != "mapping":
            return None
        node = self.metadata.entry("name")
        return node.scalar.value if node is not None and node.scalar is not None else None


def _mark(mark: Any) -> Any:
    if mark is None:
        raise StampError("libyaml gave an event without a position")
    return mark


class _Reader:
    """Reads just enough events of one chunk of a stream to find what stamp needs."""

    def __init__(self, text: str, base: int, line_base: int) -> None:
        self.parser = CParser(text)
        self.base = base
        self.line_base = line_base

    def close(self) -> None:
        self.parser.dispose()

    def event(self) -> yaml.Event:
        event = self.parser.get_event()
        if event is None:
            raise StampError("the YAML stream ended early")
        return event

    def start(self, event: yaml.Event) -> int:
        return self.base + int(_mark(event.start_mark).index)

    def end(self, event: yaml.Event) -> int:
        return self.base + int(_mark(event.end_mark).index)

    def scalar(self, event: yaml.ScalarEvent) -> _Scalar:
        mark = _mark(event.start_mark)
        return _Scalar(
            value=event.value,
            style=event.style or "",
            start=self.base + mark.index,
            end=self.end(event),
            line=self.line_base + mark.line,
            column=mark.column,
            anchored=event.anchor is not None,
        )

    def skip(self, event: yaml.Event) -> None:
        depth = 1 if isinstance(event, yaml.CollectionStartEvent) else 0
        while depth:
            nested = self.event()
            if isinstance(nested, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(nested, yaml.CollectionEndEvent):
                depth -= 1

    def node(self, event: yaml.Event, read_children: int) -> _Node:
        """A value; mappings are read read_children levels deep, the rest skipped."""
        start = self.start(event)
        if isinstance(event, yaml.ScalarEvent):
            scalar = self.scalar(event)
            return _Node("scalar", start, scalar.end, anchored=scalar.anchored, scalar=scalar)
        if isinstance(event, yaml.MappingStartEvent) and read_children > 0:
            node = _Node(
                "mapping", start, start, flow=bool(event.flow_style), anchored=bool(event.anchor)
            )
            while True:
                key_event = self.event()
                if isinstance(key_event, yaml.MappingEndEvent):
                    node.end = self.end(key_event)
                    return node
                value_event = self.event()
                if not isinstance(key_event, yaml.ScalarEvent):
                    self.skip(key_event)
                    self.skip(value_event)
                    continue
                key = self.scalar(key_event)
                node.entries.append((key, self.node(value_event, read_children - 1)))
        self.skip(event)
        return _Node("other", start, start, anchored=getattr(event, "anchor", None) is not None)

    def documents(self, whole: bool) -> Iterator[_Document]:
        self.event()  # StreamStart
        while True:
            event = self.event()
            if isinstance(event, yaml.StreamEndEvent):
                return
            root = self.event()  # after DocumentStart
            document = _Document()
            if isinstance(root, yaml.MappingStartEvent):
                while True:
                    key_event = self.event()
                    if isinstance(key_event, yaml.MappingEndEvent):
                        break
                    value_event = self.event()
                    if not isinstance(key_event, yaml.ScalarEvent):
                        self.skip(key_event)
                        self.skip(value_event)
                        continue
                    key = key_event.value
                    if key in ("apiVersion", "kind") and isinstance(value_event, yaml.ScalarEvent):
                        setattr(
                            document,
                            "api_version" if key == "apiVersion" else "kind",
                            value_event.value,
                        )
                    elif key == "metadata":
                        document.metadata_key = self.scalar(key_event)
                        document.metadata = self.node(value_event, 2)
                    else:
                        self.skip(value_event)
                    done = document.kind and document.api_version and document.metadata
                    if done and not whole:
                        yield document
                        return
            else:
                self.skip(root)
            yield document
            self.event()  # DocumentEnd


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) pieces of a stream, each starting at a ``---`` line or the start.

    A line that starts with ``---`` or ``...`` at column 0 always ends the document before
    it, so each piece holds the documents between two such lines; a piece of directives
    only (``%YAML``) stays with the document it introduces.
    """
    starts = sorted({0, *_markers(text, "---")})
    pieces = list(zip(starts, [*starts[1:], len(text)], strict=True))
    merged: list[tuple[int, int]] = []
    carry: int | None = None
    for begin, end in pieces:
        if carry is not None:
            begin, carry = carry, None
        if end != len(text) and _only_directives(text, begin, end):
            carry = begin
            continue
        merged.append((begin, end))
    for begin, end in merged:
        yield begin, text[begin:end]


def _markers(text: str, marker: str) -> Iterator[int]:
    """Offsets of the lines that start with marker followed by a blank or the line's end."""
    position = 0 if text.startswith(marker) else text.find("\n" + marker)
    while position >= 0:
        start = position if text.startswith(marker, position) else position + 1
        after = start + len(marker)
        if after == len(text) or text[after] in " \t\r\n":
            yield start
        position = text.find("\n" + marker, start + 1)


def _only_directives(text: str, begin: int, end: int) -> bool:
    """Whether text[begin:end] holds directives and comments only (at least one directive)."""
    seen = False
    position = begin
    while position < end:
        stop = text.find("\n", position, end)
        stop = end if stop < 0 else stop
        line = text[position:stop].strip()
        position = stop + 1
        if not line or line.startswith("#"):
            continue
        if not line.startswith("%"):
            return False
        seen = True
    return seen


def _documents(text: str) -> Iterator[_Document]:
    offset = 1 if text.startswith("\ufeff") else 0
    line = 0
    for begin, chunk in _chunks(text[offset:]):
        reader = _Reader(chunk, begin + offset, line)
        try:
            yield from reader.documents(whole=next(_markers(chunk, "..."), None) is not None)
        except yaml.YAMLError as error:
            raise StampError(libyaml_reader.describe(error, line)) from None
        finally:
            reader.close()
        line += chunk.count("\n")


def _as_kubernetes_string(scalar: _Scalar) -> str | None:
    """The annotation value Kubernetes reads, or None when it is not a string."""
    if scalar.style:
        return scalar.value
    try:
        values = [value for _, value in read_documents(scalar.value)]
    except YamlError:
        return None
    if not values:
        return None if scalar.value == "" else scalar.value
    return values[0] if isinstance(values[0], str) else None


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    """Index just after the line break of the line holding index."""
    found = text.find("\n", index)
    return len(text) if found < 0 else found + 1


def _eol(text: str, index: int) -> str:
    found = text.find("\n", index)
    if found > 0 and text[found - 1] == "\r":
        return "\r\n"
    return "\n"


def _indent_of(text: str, scalar: _Scalar, what: str) -> int:
    start = _line_start(text, scalar.start)
    if text[start : scalar.start].strip(" "):
        raise StampError(f"line {scalar.line + 1}: {what} does not start its line")
    return scalar.start - start


def _block_key(key: str) -> str:
    return key if _PLAIN_KEY.match(key) else json.dumps(key)


def _quoted(value: str, style: str) -> str:
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value, ensure_ascii=False)


def _flow_entries(wanted: Mapping[str, str]) -> str:
    return ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in wanted.items())


def _flow_insert(text: str, mapping: _Node, entry_text: str) -> tuple[int, int, str]:
    """Insert entry_text as the first entry of a flow mapping."""
    if not mapping.entries:
        return mapping.start + 1, mapping.start + 1, entry_text
    first = mapping.entries[0][0]
    gap = text[mapping.start + 1 : first.start]
    separator = gap[gap.rfind("\n") :] if "\n" in gap else " "
    return first.start, first.start, entry_text + "," + separator


def _edits(
    text: str, document: _Document, wanted: Mapping[str, str], where: str
) -> list[tuple[int, int, str]]:
    metadata, metadata_key = document.metadata, document.metadata_key
    if metadata is None or metadata_key is None or metadata.kind != "mapping":
        raise StampError(f"{where}: metadata is not a mapping stamp can edit")
    if metadata.anchored:
        raise StampError(f"{where}: metadata carries an anchor; stamp will not edit it")
    annotations = metadata.entry("annotations")
    annotations_key = metadata.key("annotations")
    edits: list[tuple[int, int, str]] = []
    missing = dict(wanted)
    if annotations is not None and annotations.kind == "mapping":
        if annotations.anchored:
            raise StampError(f"{where}: metadata.annotations carries an anchor")
        for key, value in annotations.entries:
            if key.value not in wanted:
                continue
            if key.value not in missing:
                raise StampError(f"{where}: annotation {key.value} is given twice")
            target = missing.pop(key.value)
            scalar = value.scalar
            if scalar is None or scalar.anchored:
                raise StampError(f"{where}: annotation {key.value} is not a plain string value")
            if _as_kubernetes_string(scalar) == target:
                continue
            if scalar.style in ("|", ">"):
                raise StampError(
                    f"line {scalar.line + 1}: annotation {key.value} is a block scalar;"
                    " write it on one line"
                )
            edits.append((scalar.start, scalar.end, _quoted(target, scalar.style)))
        if not missing:
            return edits
        if annotations.flow:
            edits.append(_flow_insert(text, annotations, _flow_entries(missing)))
            return edits
        first = annotations.entries[0][0]
        indent = " " * _indent_of(text, first, "the first annotation")
        eol = _eol(text, first.start)
        start = _line_start(text, first.start)
        if annotations_key is not None and _conditionals_open(text, annotations_key.end, start):
            # the first entries are guarded by a Helm conditional: go above it
            start = _line_end(text, annotations_key.end)
        lines = "".join(
            f"{indent}{_block_key(k)}: {json.dumps(v)}{eol}" for k, v in missing.items()
        )
        edits.append((start, start, lines))
        return edits
    if annotations is not None and not (
        annotations.kind == "scalar"
        and annotations.scalar is not None
        and not annotations.scalar.style
        and annotations.scalar.value in ("", "~", "null", "Null", "NULL")
    ):
        raise StampError(f"{where}: metadata.annotations must be a mapping")
    if metadata.flow:
        if annotations is not None and annotations_key is not None:
            null = annotations.scalar
            assert null is not None
            if null.start == null.end:
                raise StampError(f"{where}: write metadata.annotations as {{}} to stamp it")
            return [(null.start, null.end, "{" + _flow_entries(missing) + "}")]
        entry = f'"annotations": {{{_flow_entries(missing)}}}'
        return [_flow_insert(text, metadata, entry)]
    if not metadata.entries:
        raise StampError(f"{where}: metadata has no keys")
    first_key = metadata.entries[0][0]
    outer = _indent_of(text, metadata_key, "metadata")
    inner = _indent_of(text, first_key, "the first key of metadata")
    step = inner - outer if inner > outer else 2
    if annotations is not None and annotations_key is not None:
        null = annotations.scalar
        assert null is not None
        key_indent = _indent_of(text, annotations_key, "annotations")
        eol = _eol(text, annotations_key.end)
        entries = "".join(
            f"{' ' * (key_indent + step)}{_block_key(k)}: {json.dumps(v)}{eol}"
            for k, v in missing.items()
        )
        after = _line_end(text, max(annotations_key.end, null.end))
        if null.start != null.end:
            colon = text.find(":", annotations_key.end, null.start)
            edits.append((colon + 1, null.end, ""))
        if after == len(text) and not text.endswith("\n"):
            entries = eol + entries
        edits.append((after, after, entries))
        return edits
    eol = _eol(text, first_key.start)
    start = _line_start(text, first_key.start)
    lines = f"{' ' * inner}annotations:{eol}" + "".join(
        f"{' ' * (inner + step)}{_block_key(k)}: {json.dumps(v)}{eol}" for k, v in missing.items()
    )
    return [(start, start, lines)]


_TEMPLATE_ACTION = re.compile(r"\{\{-?\s*(if|with|range|end)\b")


def _conditionals_open(text: str, start: int, end: int) -> list[int]:
    """Offsets of the Helm template blocks ({{ if }}, {{ with }}, {{ range }}) opened in
    text[start:end] and not yet closed by {{ end }} there."""
    opened: list[int] = []
    for action in _TEMPLATE_ACTION.finditer(text, start, end):
        if action.group(1) != "end":
            opened.append(action.start())
        elif opened:
            opened.pop()
    return opened


def _outside_conditionals(
    text: str, document: _Document, edits: list[tuple[int, int, str]], where: str
) -> None:
    """Refuse an edit inside a Helm conditional that does not also hold metadata: some
    renders of the chart would lose the annotation."""
    assert document.metadata_key is not None
    for start, _, _ in edits:
        opened = _conditionals_open(text, document.metadata_key.start, start)
        if opened:
            line = text.count("\n", 0, opened[-1]) + 1
            block = text[opened[-1] : text.find("}}", opened[-1]) + 2]
            raise StampError(
                f"{where}: the annotations would go inside the Helm conditional {block}"
                f" (line {line}), so renders where it is false would lose them; move the"
                " conditional inside metadata.annotations, around the entries it guards,"
                " and stamp again"
            )


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, key=lambda edit: edit[0], reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def read_annotations(text: str, *, template: bool = False) -> dict[str, dict[str, str | None]]:
    """The annotations of each CRD (by name) and webhook configuration (``KIND NAME``) as
    Kubernetes reads them; a value that is not a string reads as None. ``template``: text
    is a Helm template, read with its actions blanked out."""
    found: dict[str, dict[str, str | None]] = {}
    for document in _documents(helm_template.blanked(text) if template else text):
        name = document.key
        if name is None or document.metadata is None:
            continue
        annotations = document.metadata.entry("annotations")
        values: dict[str, str | None] = {}
        if annotations is not None and annotations.kind == "mapping":
            for key, value in annotations.entries:
                values[key.value] = (
                    _as_kubernetes_string(value.scalar) if value.scalar is not None else None
                )
        found[name] = values
    return found


def _described(key: str) -> str:
    return key if " " in key else f"CRD {key}"


def stamp_text(
    text: str,
    wanted: Mapping[str, Mapping[str, str]],
    where: str = "<text>",
    *,
    template: bool = False,
) -> str:
    """text with, in each CRD (by name) and webhook configuration (``KIND NAME``) named in
    wanted, those annotations set.

    Every one named must be found (StampError otherwise); the others and other documents
    are left alone. Stamping what is already stamped returns text unchanged. ``template``:
    text is a Helm template, read with its actions blanked out (every offset kept), edited
    as it is.
    """
    edits: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for document in _documents(helm_template.blanked(text) if template else text):
        name = document.key
        if name is None or name not in wanted:
            continue
        what = f"{where}: {_described(name)}"
        if name in seen:
            raise StampError(f"{what} appears twice")
        seen.add(name)
        found = _edits(text, document, wanted[name], what)
        _outside_conditionals(text, document, found, what)
        edits.extend(found)
    missing = sorted(set(wanted) - seen)
    if missing:
        raise StampError(
            f"{where}: {_described(missing[0])} not found as a document stamp can edit"
            " (CRDs inside a List are not stamped)"
        )
    if not edits:
        return text
    result = _apply(text, edits)
    read_back = read_annotations(result, template=template)
    for name, values in wanted.items():
        got = read_back.get(name, {})
        if any(got.get(key) != value for key, value in values.items()):
            raise StampError(f"{where}: {_described(name)}: stamping did not read back (a bug)")
    return result


# ---------------------------------------------------------------- file edge


def write_file(path: Path, text: str) -> None:
    """Replace path's content with text (UTF-8, line endings as given), atomically."""
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
