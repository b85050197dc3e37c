"""Files, directories and standard input to YAML documents, each with its source."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from upgrade_guard.crd import Source
from upgrade_guard.load.yaml_reader import YamlError, read_documents

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
STDIN = "-"
_SUFFIXES = (".yaml", ".yml", ".json")


class LoadError(ValueError):
    """Input that cannot be used; the message names the file (and document, CRD, path)."""


@dataclass(frozen=True)
class Document:
    source: Source
    line: int
    body: Any


def _files(argument: str) -> list[Path]:
    path = Path(argument)
    if path.is_dir():
        found = [p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file()]
        if not found:
            raise LoadError(f"{argument}: no .yaml, .yml or .json files in this directory")
        return sorted(found)
    if path.is_file():
        return [path]
    if not path.exists():
        raise LoadError(f"{argument}: no such file or directory")
    raise LoadError(f"{argument}: not a regular file or directory")


def _read(argument: str, budget: int) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) per input file, refusing input beyond budget bytes in all."""
    if argument == STDIN:
        data = sys.stdin.buffer.read(budget + 1)
        if len(data) > budget:
            raise LoadError(f"<stdin>: input larger than the limit of {budget} bytes")
        yield "<stdin>", data
        return
    used = 0
    for path in _files(argument):
        try:
            size = path.stat().st_size
            if used + size > budget:
                raise LoadError(
                    f"{path}: input larger than the limit of {budget} bytes in all"
                    " (raise it with --max-bytes)"
                )
            with open(path, "rb") as handle:
                data = handle.read(budget - used + 1)
        except OSError as error:
            raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
        used += len(data)
        yield str(path), data


def load_documents(argument: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Document]:
    """Every document of a file, a directory (recursively) or standard input ("-")."""
    for name, data in _read(argument, max_bytes):
        index = 0
        try:
            for index, (line, body) in enumerate(read_documents(data)):
                yield Document(Source(name, index), line, body)
        except YamlError as error:
            raise LoadError(f"{name}: {error}") from None
        except UnicodeDecodeError as error:
            raise LoadError(f"{name}: not UTF-8 text ({error.reason})") from None
