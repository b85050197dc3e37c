"""Where a finding sits in the new CRD file: the line of its schema node, for annotations on
a pull request's diff (``--output github``).

Only files that have findings are read again, with libyaml's node graph, which keeps line
numbers; everything else keeps the fast path. A finding is placed at the key of the deepest
node of its path that the file has (a removed property at its parent), a version-level
finding at its version's entry, a CRD-level finding at the CRD's ``metadata.name``. A file
that cannot be read this way (standard input, gzip) leaves its findings without a place.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import yaml

from upgrade_guard import schema
from upgrade_guard.crd import Crd, CrdHead
from upgrade_guard.findings import Finding

_SEGMENT = re.compile(r'\[\]|\["(?:[^"\\]|\\.)*"\]|[^.\[]+')
_KEYWORDS = {schema.ITEMS: "items", schema.ADDITIONAL: "additionalProperties"}


def _entry(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return key_node, value
    return None


def _crd_documents(text: str) -> Iterator[yaml.MappingNode]:
    for document in yaml.compose_all(text, Loader=yaml.CSafeLoader):
        kind = _entry(document, "kind")
        if kind is not None and kind[1].value == "List":
            items = _entry(document, "items")
            if items is not None and isinstance(items[1], yaml.SequenceNode):
                yield from (i for i in items[1].value if isinstance(i, yaml.MappingNode))
        elif isinstance(document, yaml.MappingNode):
            yield document


def _scalar(node: yaml.Node | None, key: str) -> str | None:
    found = _value(_entry(node, key))
    return str(found.value) if isinstance(found, yaml.ScalarNode) else None


def _name(document: yaml.MappingNode) -> str | None:
    return _scalar(_value(_entry(document, "metadata")), "name")


def _value(entry: tuple[yaml.Node, yaml.Node] | None) -> yaml.Node | None:
    return entry[1] if entry is not None else None


def _schema_keys(path: str) -> list[str]:
    """The YAML keys from a version's schema root down to path (the report's syntax)."""
    keys: list[str] = []
    for segment in _SEGMENT.findall("" if path == "." else path):
        if segment in _KEYWORDS:
            keys.append(_KEYWORDS[segment])
        elif segment.startswith('["'):
            keys += ["properties", json.loads(segment[1:-1])]
        else:
            keys += ["properties", segment]
    return keys


def _line(document: yaml.MappingNode, version: str | None, path: str | None) -> int:
    metadata = _entry(document, "metadata")
    best = _entry(_value(metadata), "name") or metadata
    line = int((best[0] if best is not None else document).start_mark.line)
    versions = _value(_entry(_value(_entry(document, "spec")), "versions"))
    if version is None or not isinstance(versions, yaml.SequenceNode):
        return line + 1
    read_as = version.split("->")[-1]  # UG110: the version objects are read through
    entry = next((v for v in versions.value if _scalar(v, "name") == read_as), None)
    if entry is None:
        return line + 1
    line = int(entry.start_mark.line)
    node = _value(_entry(_value(_entry(entry, "schema")), "openAPIV3Schema"))
    if path is None or node is None:
        return line + 1
    for key in _schema_keys(path):
        found = _entry(node, key)
        if found is None:
            break
        line, node = int(found[0].start_mark.line), found[1]
    return line + 1


def located(
    findings: Sequence[Finding], crds: Mapping[str, Crd | CrdHead], root: Path | None = None
) -> tuple[Finding, ...]:
    """findings with ``location`` (file, line) set where the new CRD file shows them. With
    root, the CRDs' files are paths relative to it (a git work tree), shown as they are."""
    by_file: dict[str, list[int]] = {}
    for index, finding in enumerate(findings):
        crd = None if finding.crd is None else crds.get(finding.crd)
        if crd is not None and ((root or Path()) / crd.source.file).is_file():
            by_file.setdefault(crd.source.file, []).append(index)
    result = list(findings)
    for file, indexes in by_file.items():
        relative = os.path.relpath(file)
        shown = file if root is not None or relative.startswith("..") else relative
        try:
            text = ((root or Path()) / file).read_text("utf-8")
            documents = {_name(d): d for d in _crd_documents(text)}
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        for index in indexes:
            finding = findings[index]
            document = documents.get(finding.crd)
            if document is not None:
                line = _line(document, finding.version, finding.path)
                result[index] = replace(finding, location=(shown, line))
    return tuple(result)
