"""A CustomResourceDefinition as plain data: the facts about it that the rules ask for."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
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
    """One apiextensions.k8s.io/v1 CRD, already checked to have the shape the rules rely on."""

    raw: Mapping[str, Any]
    source: Source = field(default_factory=lambda: Source("<memory>"))

    @property
    def name(self) -> str:
        return str(self.raw["metadata"]["name"])

    @property
    def spec(self) -> Mapping[str, Any]:
        spec: Mapping[str, Any] = self.raw["spec"]
        return spec

    @property
    def names(self) -> Mapping[str, Any]:
        names: Mapping[str, Any] = self.spec.get("names") or {}
        return names

    @cached_property
    def versions(self) -> dict[str, Mapping[str, Any]]:
        return {str(version["name"]): version for version in self.spec.get("versions") or []}

    @property
    def served_versions(self) -> list[str]:
        return [name for name, version in self.versions.items() if version.get("served")]

    @property
    def storage_version(self) -> str | None:
        for name, version in self.versions.items():
            if version.get("storage"):
                return name
        return None

    @property
    def stored_versions(self) -> list[str]:
        """Versions objects may be stored at: status.storedVersions plus the storage version.

        The apiserver records the storage version in status.storedVersions when the CRD is
        created and never removes entries, so the storage version is always among them even
        when the file read carries no status.
        """
        status = self.raw.get("status") or {}
        stored = [str(name) for name in status.get("storedVersions") or []]
        storage = self.storage_version
        if storage is not None and storage not in stored:
            stored.append(storage)
        return stored

    @property
    def conversion_strategy(self) -> str:
        conversion = self.spec.get("conversion") or {}
        return str(conversion.get("strategy") or "None")

    def schema_of(self, version: str) -> Mapping[str, Any]:
        validation = self.versions[version].get("schema") or {}
        root: Mapping[str, Any] = validation.get("openAPIV3Schema") or {}
        return root


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
    """What carries the contract annotations: a CRD, a webhook configuration."""

    @property
    def raw(self) -> Mapping[str, Any]: ...


def annotations_of(crd: Carrier) -> Mapping[str, Any]:
    metadata = crd.raw.get("metadata") or {}
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def stamped_number(crd: Carrier, key: str) -> int | None:
    """The canonical positive decimal annotation key carries as a string, else None."""
    value = annotations_of(crd).get(key)
    return canonical_number(value) if isinstance(value, str) else None
