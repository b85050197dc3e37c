"""A CustomResourceDefinition as plain data: the facts about it that the rules ask for."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

_CANONICAL = re.compile(r"[1-9][0-9]*\Z")
# The annotations a stamped CRD carries, under the policy's annotation-prefix.
DEFAULT_ANNOTATION_PREFIX = "upgrade-guard.io/"
SCHEMA_VERSION = "crd-schema-version"
SCHEMA_DIGEST = "crd-schema-digest"
CONTROLLER_STATE_VERSION = "controller-state-version"


@dataclass(frozen=True)
class Source:
    """Where a document came from, for error messages and reports."""

    file: str
    document: int = 0

    def __str__(self) -> str:
        return f"{self.file} (document {self.document + 1})"


@dataclass(frozen=True, eq=False)
class Crd:
    """One apiextensions.k8s.io/v1 CRD, already checked to have the shape the rules rely on.

    Its facts are read once, as it is made, so every layer below reads fields and none goes
    back to the raw CRD for them."""

    raw: Mapping[str, Any]
    source: Source = field(default_factory=lambda: Source("<memory>"))
    name: str = field(init=False)
    spec: Mapping[str, Any] = field(init=False)
    names: Mapping[str, Any] = field(init=False)
    group: str = field(init=False)
    kind: str = field(init=False)
    plural: str = field(init=False)
    versions: dict[str, Mapping[str, Any]] = field(init=False)
    # Each version's openAPIV3Schema ({} where it declares none).
    schemas: dict[str, Mapping[str, Any]] = field(init=False)
    served_versions: list[str] = field(init=False)
    storage_version: str | None = field(init=False)
    # Versions objects may be stored at: status.storedVersions plus the storage version. The
    # apiserver records the storage version in status.storedVersions when the CRD is created
    # and never removes entries, so the storage version is always among them even when the
    # file read carries no status.
    stored_versions: list[str] = field(init=False)
    # The versions whose schema applied to objects: served ones, and those stored at.
    reached_versions: frozenset[str] = field(init=False)
    conversion_strategy: str = field(init=False)
    annotations: Mapping[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        fact = partial(object.__setattr__, self)
        fact("name", str(self.raw["metadata"]["name"]))
        spec = self.raw["spec"]
        fact("spec", spec)
        names = spec.get("names") or {}
        fact("names", names)
        fact("group", str(spec.get("group") or ""))
        fact("kind", str(names.get("kind") or ""))
        fact("plural", str(names.get("plural") or ""))
        versions = {str(version["name"]): version for version in spec.get("versions") or []}
        fact("versions", versions)
        fact("schemas", {name: _schema_in(version) for name, version in versions.items()})
        fact("served_versions", [name for name, v in versions.items() if v.get("served")])
        storage = next((name for name, v in versions.items() if v.get("storage")), None)
        fact("storage_version", storage)
        status = self.raw.get("status") or {}
        stored = [str(name) for name in status.get("storedVersions") or []]
        if storage is not None and storage not in stored:
            stored.append(storage)
        fact("stored_versions", stored)
        fact("reached_versions", frozenset((*self.served_versions, *stored)))
        conversion = spec.get("conversion") or {}
        fact("conversion_strategy", str(conversion.get("strategy") or "None"))
        fact("annotations", annotations_in(self.raw))

    @property
    def head(self) -> CrdHead:
        return CrdHead(self.name, self.source, self.annotations)


def _schema_in(version: Mapping[str, Any]) -> Mapping[str, Any]:
    validation = version.get("schema") or {}
    root: Mapping[str, Any] = validation.get("openAPIV3Schema") or {}
    return root


@dataclass(frozen=True)
class CrdHead:
    """What a command reads of a CRD once the CRDs are compared: its name, where it is (the
    report's locations) and its annotations (the schema versions a diff goes between)."""

    name: str
    source: Source
    annotations: Mapping[str, Any]


def canonical_number(value: Any) -> int | None:
    """A canonical positive decimal (an int, or a string such as "12") as an int, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and _CANONICAL.match(value):
        return int(value)
    return None


class Carrier(Protocol):
    """What carries the contract annotations: a CRD (or its head), a webhook configuration."""

    @property
    def annotations(self) -> Mapping[str, Any]: ...


def annotations_in(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = raw.get("metadata") or {}
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}
