"""Stamping round-trips byte for byte on every file of the shared corpus.

Per file, in memory (the corpus is read-only and 224 MB; no digest is computed here, the
stamper takes the values as given):
- stamping adds one block of annotation lines and changes no other byte;
- stamping again with other values changes only those lines, and stamping back with the
  first values gives the first result byte for byte; stamping twice is a no-op;
- Kubernetes' reading of the stamped file equals its reading of the original plus the
  annotations: for every file of the smaller projects, for every 25th of the 150 MB one.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from corpus import projects, require_corpus
from upgrade_guard.load.yaml_reader import read_documents
from upgrade_guard.write.stamper import StampError, stamp_text

V = "upgrade-guard.io/crd-schema-version"
D = "upgrade-guard.io/crd-schema-digest"
FIRST = {V: "7", D: "sha256:" + "0" * 64}
SECOND = {V: "12", D: "sha256:" + "f" * 64}
OUR_LINE = re.compile(
    r" *(annotations:|upgrade-guard\.io/crd-schema-(version|digest): \"[^\"]*\")\r?\n\Z"
)
SEMANTIC_EVERY = 25  # in projects of more than SMALL files, every 25th is parsed in full
SMALL = 500


def _inserted(before: str, after: str) -> list[str]:
    """The lines after has beyond before, asserting that nothing else differs."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    prefix = 0
    while prefix < len(old) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < len(old) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    assert prefix + suffix == len(old), "a line of the original changed"
    return new[prefix : len(new) - suffix]


def _changed_lines(first: str, second: str) -> list[tuple[str, str]]:
    a, b = first.splitlines(keepends=True), second.splitlines(keepends=True)
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


def _with_annotations(body: Any, values: dict[str, str]) -> Any:
    metadata = dict(body["metadata"])
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **values}
    return {**body, "metadata": metadata}


def _annotations_guarded(text: str) -> bool:
    """Whether the line before ``  annotations:`` opens a Helm conditional (cert-manager)."""
    lines = text.splitlines()
    return any(
        line.strip() == "annotations:" and "{{- if" in lines[index - 1]
        for index, line in enumerate(lines)
    )


def _check(path: Path, semantic: bool) -> bool:
    """Round-trip path; False when stamp refuses it for a Helm conditional, as it must."""
    text = path.read_bytes().decode("utf-8")
    name = path.stem
    if _annotations_guarded(text):
        with pytest.raises(StampError, match="inside the Helm conditional"):
            stamp_text(text, {name: FIRST}, str(path))
        return False
    first = stamp_text(text, {name: FIRST}, str(path))
    inserted = _inserted(text, first)
    assert inserted and all(OUR_LINE.match(line) for line in inserted), (path, inserted)
    assert stamp_text(first, {name: FIRST}) == first
    second = stamp_text(first, {name: SECOND})
    assert all(OUR_LINE.match(x) and OUR_LINE.match(y) for x, y in _changed_lines(first, second))
    assert stamp_text(second, {name: FIRST}) == first
    if semantic:
        (_, original), *_ = read_documents(text)
        (_, stamped), *_ = read_documents(first)
        assert stamped == _with_annotations(original, FIRST), path
    return True


@pytest.mark.parametrize("project", projects() or ["<no corpus>"])
def test_stamping_round_trips_on_every_corpus_file(project: str) -> None:
    corpus = require_corpus()
    files = sorted((corpus / project).rglob("*.yaml"))
    assert files, f"{project}: no CRD files"
    started = time.monotonic()
    every = 1 if len(files) <= SMALL else SEMANTIC_EVERY
    refused = sum(not _check(path, semantic=index % every == 0) for index, path in enumerate(files))
    elapsed = time.monotonic() - started
    print(
        f"{project}: {len(files)} files stamped in memory in {elapsed:.1f} s"
        f" ({refused} refused: annotations inside a Helm conditional)"
    )
