"""Embedded resources (``x-kubernetes-embedded-resource``): apiVersion, kind and metadata
checked as apiextensions-apiserver ``pkg/apiserver/schema/objectmeta/validation.go`` does,
on CREATE and UPDATE alike (never ratcheted), but not on /status writes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from . import values
from .violations import Violation

_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_GROUP_VERSION = re.compile(r"^[^/]+(/[^/]+)?$")
_META_STRINGS = ("name", "generateName", "namespace", "uid", "resourceVersion", "selfLink")
_META_MAPS = ("labels", "annotations")


Memo = values.Memo


def violations(
    value: Any, schema: values.Schema | None, path: str = "", memo: Memo | None = None
) -> list[Violation]:
    """Violations in ``value``; ``memo``: see :func:`values.walk_remembered`."""
    if schema is None or not values.uses(schema, "x-kubernetes-embedded-resource"):
        return []
    if schema.get("x-kubernetes-embedded-resource"):
        memo = None  # the root's own check is not per child
    return values.walk_remembered(value, schema, path, memo, _walk)


def _walk(value: Any, schema: values.Schema | None, path: str) -> Iterator[Violation]:
    if schema is None or not values.uses(schema, "x-kubernetes-embedded-resource"):
        return
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            yield from _resource(value, path)
        for item, item_schema, item_path in values.fields(value, schema, path):
            yield from _walk(item, item_schema, item_path)
    elif isinstance(value, list):
        items = values.item_schema(schema)
        for i, item in enumerate(value):
            yield from _walk(item, items, values.indexed(path, i))


def _resource(value: dict[str, Any], path: str) -> Iterator[Violation]:
    for name in ("apiVersion", "kind"):
        if name not in value:
            yield Violation(values.child(path, name), "embedded", "Required value")
    api_version = value.get("apiVersion")
    if "apiVersion" in value and not (
        isinstance(api_version, str) and api_version and _GROUP_VERSION.match(api_version)
    ):
        yield Violation(values.child(path, "apiVersion"), "embedded", "must be a group/version")
    kind = value.get("kind")
    if "kind" in value and not (
        isinstance(kind, str) and kind and len(kind) <= 63 and _DNS1035_LABEL.match(kind.lower())
    ):
        yield Violation(values.child(path, "kind"), "embedded", "must be a DNS-1035 label")
    if "metadata" in value:
        yield from _metadata(value["metadata"], values.child(path, "metadata"))


def _metadata(meta: Any, path: str) -> Iterator[Violation]:
    if meta is None:
        return
    if not isinstance(meta, dict):
        yield Violation(path, "embedded", "must be an object")
        return
    for name in _META_STRINGS:
        if name in meta and meta[name] is not None and not isinstance(meta[name], str):
            yield Violation(values.child(path, name), "embedded", "must be a string")
            return
    for name in _META_MAPS:
        found = meta.get(name)
        if found is not None and not (
            isinstance(found, dict) and all(isinstance(v, str) for v in found.values())
        ):
            yield Violation(values.child(path, name), "embedded", "must be a map of strings")
            return
    for name in ("name", "generateName"):
        text = meta.get(name) or ""
        if text in (".", "..") or "/" in text or "%" in text:
            yield Violation(values.child(path, name), "embedded", "must be a valid path segment")
    namespace = meta.get("namespace") or ""
    if namespace and not (len(namespace) <= 63 and _DNS1123_LABEL.match(namespace)):
        yield Violation(values.child(path, "namespace"), "embedded", "must be a DNS-1123 label")
    for key, label in (meta.get("labels") or {}).items():
        if not _qualified(key):
            yield Violation(
                values.keyed(values.child(path, "labels"), key), "embedded", "invalid label key"
            )
        if len(label) > 63 or not _LABEL_VALUE.match(label):
            yield Violation(
                values.keyed(values.child(path, "labels"), key), "embedded", "invalid label value"
            )
    annotations = meta.get("annotations") or {}
    for key in annotations:
        if not _qualified(key.lower()):
            yield Violation(
                values.keyed(values.child(path, "annotations"), key),
                "embedded",
                "invalid annotation key",
            )
    if sum(len(k) + len(v) for k, v in annotations.items()) > 256 * 1024:
        yield Violation(values.child(path, "annotations"), "embedded", "annotations too long")


def _qualified(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and not (prefix and len(prefix) <= 253 and _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))
