"""Files, directories and standard input to JSON or YAML documents, each with its source."""

from __future__ import annotations

import functools
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from upgrade_guard.crd import Source
from upgrade_guard.load.json_reader import JsonError, read_stream, starts_as_json
from upgrade_guard.load.yaml_reader import read_documents
from upgrade_guard.load.yaml_scalars import MAX_DEPTH, YamlError

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
STDIN = "-"
_SUFFIXES = (".yaml", ".yml", ".json", ".gz")
_CHUNK = 1 << 22
GZIP_MAGIC = b"\x1f\x8b"


class LoadError(ValueError):
    """Input that cannot be used; the message names the file (and document, CRD, path)."""


@dataclass(frozen=True)
class Document:
    source: Source
    line: int
    body: Any


def files_of(argument: str) -> list[Path]:
    """The input files a directory (recursively) or file argument names, in reading order."""
    path = Path(argument)
    if path.is_dir():
        # Hidden entries are skipped: a mounted ConfigMap also shows every file under ..data/.
        found = [
            p
            for p in path.rglob("*")
            if p.suffix in _SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(path).parts)
        ]
        if not found:
            raise LoadError(f"{argument}: no .yaml, .yml, .json or .gz files in this directory")
        return sorted(found)
    if path.is_file():
        return [path]
    if not path.exists():
        raise LoadError(f"{argument}: no such file or directory")
    raise LoadError(f"{argument}: not a regular file or directory")


def _read_at_most(handle: BinaryIO, limit: int, size_hint: int) -> bytes:
    """Up to limit + 1 bytes (one more than allowed tells there is too much), never setting
    memory aside for more than the input holds (``read(n)`` allocates n bytes first)."""
    parts: list[bytes] = []
    total = 0
    want = min(size_hint, limit) + 1 if size_hint > 0 else min(_CHUNK, limit + 1)
    while total <= limit:
        part = handle.read(want)
        if not part:
            break
        parts.append(part)
        total += len(part)
        want = min(_CHUNK, limit + 1 - total)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_inputs(argument: str, budget: int) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) per input file, refusing input beyond budget bytes in all."""
    if argument == STDIN:
        data = _stdin(sys.stdin.buffer, budget)
        if len(data) > budget:
            raise LoadError(f"<stdin>: input larger than the limit of {budget} bytes")
        yield "<stdin>", data
        return
    yield from read_files(files_of(argument), budget)


@functools.cache
def _stdin(stream: BinaryIO, budget: int) -> bytes:
    """Standard input, read once: a rendered chart piped in is read for its CRDs and again
    for its other objects (load/rendered.py)."""
    return _read_at_most(stream, budget, 0)


def read_files(paths: Iterable[Path], budget: int, used: int = 0) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) per file, refusing input beyond budget bytes in all, of which ``used``
    went to files read before these."""
    for path in paths:
        too_much = LoadError(
            f"{path}: input larger than the limit of {budget} bytes in all"
            " (raise it with --max-bytes)"
        )
        try:
            size = path.stat().st_size
            if used + size > budget:
                raise too_much
            with open(path, "rb") as handle:
                data = _read_at_most(handle, budget - used, size)
        except OSError as error:
            raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
        used += len(data)
        if used > budget:
            raise too_much
        yield str(path), data


def _check_utf8(name: str, data: bytes) -> None:
    """Kubernetes reads UTF-8 (or UTF-16 with a byte order mark, as libyaml does)."""
    if data.isascii() or data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise LoadError(
            f"{name}: line {line}: not UTF-8 text (byte 0x{data[error.start]:02x}: {error.reason})"
        ) from None


def _gunzipped(name: str, data: bytes, limit: int) -> bytes:
    """A gzip bundle's content (``upgrade-guard pack`` writes them), at most limit bytes."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        content = inflater.decompress(data, limit + 1)
    except zlib.error as error:
        raise LoadError(f"{name}: not a readable gzip file ({error})") from None
    if len(content) > limit:
        raise LoadError(f"{name}: decompresses to more than the limit of {limit} bytes")
    if not inflater.eof:
        raise LoadError(f"{name}: the gzip stream is truncated")
    return content


def _values(name: str, data: bytes) -> Iterator[tuple[int, Any]]:
    """(first line, value) per document: JSON when the input starts with "{", else YAML,
    as kubectl decides."""
    if starts_as_json(data):
        return read_stream(data, MAX_DEPTH, read_documents)
    _check_utf8(name, data)
    return read_documents(data)


def documents_of(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Document]:
    """Every document of one input's bytes (gzip-compressed or not); a problem is a
    LoadError naming the input."""
    if data.startswith(GZIP_MAGIC):
        data = _gunzipped(name, data, max_bytes)
    try:
        for index, (line, body) in enumerate(_values(name, data)):
            yield Document(Source(name, index), line, body)
    except (YamlError, JsonError) as error:
        raise LoadError(f"{name}: {error}") from None
    except UnicodeDecodeError as error:
        raise LoadError(f"{name}: not UTF-8 text ({error.reason})") from None


def load_documents(argument: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Document]:
    """Every document of a file, a directory (recursively) or standard input ("-")."""
    for name, data in read_inputs(argument, max_bytes):
        yield from documents_of(name, data, max_bytes)
