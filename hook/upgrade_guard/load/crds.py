"""Documents to CRDs: keep apiextensions.k8s.io/v1 CRDs, check the shape the rules rely on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from upgrade_guard import schema
from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.documents import Document, LoadError

API_VERSION = "apiextensions.k8s.io/v1"
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
# Structural schemas keep these out of allOf/anyOf/oneOf/not, except type in the branches
# of an x-kubernetes-int-or-string node (apiextensions structural validation).
_FORBIDDEN_IN_JUNCTORS = ("type", "default", "additionalProperties", "nullable")


def is_crd(body: Any) -> bool:
    return (
        isinstance(body, Mapping)
        and body.get("kind") == "CustomResourceDefinition"
        and str(body.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
    )


def _where(source: Source, name: str | None = None) -> str:
    return f"{source}: CRD {name}" if name else str(source)


def _check_schema(root: Any, source: Source, name: str, version: str) -> None:
    def fail(path: schema.Path, problem: str) -> NoReturn:
        raise LoadError(
            f"{_where(source, name)} version {version}: schema is not structural at"
            f" {schema.render_path(path)}: {problem}"
        )

    if not isinstance(root, Mapping):
        fail((), "openAPIV3Schema must be a mapping")
    stack: list[tuple[schema.Path, Any, bool, bool]] = [((), root, False, False)]
    while stack:
        path, node, in_junctor, type_allowed = stack.pop()
        if not isinstance(node, Mapping):
            fail(path, "a schema must be a mapping")
        if "$ref" in node:
            fail(path, "$ref is not allowed in CRD schemas")
        if isinstance(node.get("items"), list):
            fail(path, "items must be one schema, not a list")
        if node.get("properties") and node.get("additionalProperties") not in (None, True):
            fail(path, "properties and additionalProperties cannot both be set (except true)")
        declared = node.get("type")
        if declared is not None and declared not in _TYPES:
            fail(path, f"unknown type {declared!r}")
        if in_junctor:
            for keyword in _FORBIDDEN_IN_JUNCTORS:
                if keyword in node and not (keyword == "type" and type_allowed):
                    fail(path, f"{keyword} is not allowed inside allOf/anyOf/oneOf/not")
        elif declared is None and not (
            node.get("x-kubernetes-int-or-string") is True
            or node.get("x-kubernetes-preserve-unknown-fields") is True
        ):
            fail(path, "type is missing")
        if not isinstance(node.get("properties") or {}, Mapping):
            fail(path, "properties must be a mapping")
        for keyword in ("allOf", "anyOf", "oneOf"):
            if not isinstance(node.get(keyword) or [], list):
                fail(path, f"{keyword} must be a list")
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        for position in schema.subschemas(node):
            part = position.segment
            if part == schema.ADDITIONAL and isinstance(position.schema, bool):
                continue
            if part is None:
                branch_typed = int_or_string and position.keyword != "not"
                stack.append((path, position.schema, True, branch_typed))
            else:
                stack.append((path + (part,), position.schema, in_junctor, False))


def _check_crd(body: Mapping[str, Any], source: Source) -> Crd:
    if body.get("apiVersion") != API_VERSION:
        raise LoadError(
            f"{source}: {body.get('apiVersion')} CustomResourceDefinitions are not"
            f" supported (served until Kubernetes 1.22); convert to {API_VERSION}"
        )
    metadata = body.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        raise LoadError(f"{source}: CustomResourceDefinition without metadata.name")
    name = str(metadata["name"])

    def fail(problem: str) -> NoReturn:
        raise LoadError(f"{_where(source, name)}: {problem}")

    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        fail("spec must be a mapping")
    names = spec.get("names")
    if not isinstance(names, Mapping) or not all(
        isinstance(names.get(key), str) for key in ("plural", "kind")
    ):
        fail("spec.names must give plural and kind")
    if name != f"{names['plural']}.{spec.get('group')}":
        fail("metadata.name must be <spec.names.plural>.<spec.group>")
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        fail("spec.versions must be a non-empty list")
    seen: set[str] = set()
    for index, version in enumerate(versions):
        if not isinstance(version, Mapping) or not isinstance(version.get("name"), str):
            fail(f"spec.versions[{index}] must be a mapping with a name")
        if version["name"] in seen:
            fail(f"version {version['name']} is listed twice")
        seen.add(version["name"])
        validation = version.get("schema")
        if not isinstance(validation, Mapping) or "openAPIV3Schema" not in validation:
            fail(f"version {version['name']} has no schema.openAPIV3Schema")
        _check_schema(validation["openAPIV3Schema"], source, name, version["name"])
    storage = [version["name"] for version in versions if version.get("storage") is True]
    if len(storage) != 1:
        fail(f"exactly one version must have storage: true (found {len(storage)})")
    return Crd(body, source)


def crds_from(documents: Iterable[Document]) -> dict[str, Crd]:
    """The CRDs among documents, by name. Other kinds are ignored; a List is looked into."""
    found: dict[str, Crd] = {}
    for document in documents:
        body = document.body
        if body is None:
            continue
        if not isinstance(body, Mapping):
            raise LoadError(
                f"{document.source} (line {document.line}): a document must be a"
                f" mapping, not a {type(body).__name__}"
            )
        items = body.get("items") if body.get("kind") == "List" else [body]
        for item in items if isinstance(items, list) else []:
            if not is_crd(item):
                continue
            crd = _check_crd(item, document.source)
            if crd.name in found:
                raise LoadError(
                    f"{document.source}: CRD {crd.name} is defined twice (also in"
                    f" {found[crd.name].source})"
                )
            found[crd.name] = crd
    return found
