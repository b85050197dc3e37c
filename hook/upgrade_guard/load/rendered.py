"""A rendered chart (a ``helm template`` stream, a release record's manifest, a directory of
manifests) read as the guard reads it: the CRDs taken (``crds_from``), the operator's
ClusterRoles and Roles and its webhook configurations read, every other kind ignored.

Objects annotated ``helm.sh/hook`` are Helm's hooks (the guard's own Job and its RBAC among
them): Helm keeps them out of the release's manifest and deletes them after they ran, so they
are no contract of the release and are left out here as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import (
    DEFAULT_MAX_BYTES,
    GZIP_MAGIC,
    Document,
    LoadError,
    documents_of,
    read_inputs,
)
from upgrade_guard.manifests import (
    ADMISSION_GROUP,
    ADMISSION_POLICY,
    RBAC_GROUP,
    ROLE_KINDS,
    WEBHOOK_KINDS,
    Manifests,
    PolicyRule,
    Role,
    WebhookConfiguration,
)

HELM_HOOK = "helm.sh/hook"
# Where an input may hold a role, webhook configuration or admission policy (`kind: Role`,
# YAML or JSON):
# inputs without one (a directory of CRDs, whose descriptions may well say "Role") are not
# parsed a second time. A literal start keeps the scan fast (0.16 s over upjet's 90 MB,
# where a line-anchored pattern took 4.8 s).
_MAY_HOLD = re.compile(
    rb"""kind"?[ \t]*:[ \t]*["']?"""
    rb"(?:ClusterRole|Role|ValidatingWebhookConfiguration|MutatingWebhookConfiguration"
    rb"|ValidatingAdmissionPolicy)\b"
)


@dataclass(frozen=True)
class Rendered:
    """A rendered chart's CRDs by name, and its roles and webhook configurations."""

    crds: dict[str, Crd]
    manifests: Manifests


def _items(documents: Iterable[Document]) -> Iterator[tuple[Source, Mapping[str, Any]]]:
    """Each object of the documents (a List looked into), with its source."""
    for document in documents:
        body = document.body
        if not isinstance(body, Mapping):
            continue  # crds_from says what is wrong with it
        items = body.get("items") if body.get("kind") == "List" else [body]
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                yield document.source, item


def _strings(where: str, rule: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = rule.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LoadError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _role(source: Source, kind: str, body: Mapping[str, Any], name: str) -> Role:
    where = f"{source}: {kind} {name}"
    rules = body.get("rules")
    if rules is not None and not isinstance(rules, list):
        raise LoadError(f"{where}: rules must be a list")
    parsed = []
    for index, rule in enumerate(rules or []):
        if not isinstance(rule, Mapping):
            raise LoadError(f"{where}: rules[{index}] must be a mapping")
        at = f"{where}: rules[{index}]"
        parsed.append(
            PolicyRule(
                verbs=_strings(at, rule, "verbs"),
                api_groups=_strings(at, rule, "apiGroups"),
                resources=_strings(at, rule, "resources"),
                resource_names=_strings(at, rule, "resourceNames"),
                non_resource_urls=_strings(at, rule, "nonResourceURLs"),
            )
        )
    metadata = body["metadata"]
    namespace = metadata.get("namespace") if kind == "Role" else ""
    return Role(
        kind=kind,
        name=name,
        namespace=namespace if isinstance(namespace, str) else "",
        rules=tuple(parsed),
        aggregated=kind == "ClusterRole" and body.get("aggregationRule") is not None,
        source=source,
    )


def _kind(body: Mapping[str, Any]) -> str | None:
    """ClusterRole, Role, a webhook configuration kind or ValidatingAdmissionPolicy, of the
    API groups that serve them; None for every other object."""
    kind, api_version = body.get("kind"), str(body.get("apiVersion", ""))
    if kind in ROLE_KINDS and api_version.startswith(RBAC_GROUP + "/"):
        return str(kind)
    if kind in (*WEBHOOK_KINDS, ADMISSION_POLICY) and api_version.startswith(ADMISSION_GROUP + "/"):
        return str(kind)
    return None


Item = tuple[Source, Mapping[str, Any]]


def manifest_items(documents: Iterable[Document]) -> list[Item]:
    """The roles and webhook configurations among documents (a List looked into), each with
    its source: what ``manifests_from`` reads of them, kept without the rest."""
    return [(source, body) for source, body in _items(documents) if _kind(body) is not None]


def noting_manifests(documents: Iterable[Document], items: list[Item]) -> Iterator[Document]:
    """The documents, passed on as they are read, their roles and webhook configurations
    noted in ``items`` on the way (one pass over a bundle for its CRDs and them)."""
    for document in documents:
        items.extend(manifest_items([document]))
        yield document


# The library's lasting grant to the guard (a ClusterRole and its binding): the guard's, not
# a contract of the operator's.
GUARD_GRANT = "upgrade-guard.io/guard-grant"


def manifests_from(documents: Iterable[Document]) -> Manifests:
    """The roles and webhook configurations among documents, hooks and the guard's own
    grant left out."""
    return manifests_of(_items(documents))


def manifests_of(items: Iterable[Item]) -> Manifests:
    """``manifests_from`` of the objects given."""
    roles: dict[str, Role] = {}
    webhooks: dict[str, WebhookConfiguration] = {}
    seen: dict[str, Source] = {}
    admission_policy = False
    for source, body in items:
        kind = _kind(body)
        if kind is None:
            continue
        metadata = body.get("metadata")
        if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
            raise LoadError(f"{source}: {kind} without metadata.name")
        annotations = metadata.get("annotations")
        if isinstance(annotations, Mapping) and {HELM_HOOK, GUARD_GRANT} & annotations.keys():
            continue
        if kind == ADMISSION_POLICY:
            admission_policy = admission_policy or _is_the_guards(metadata)
            continue
        item: Role | WebhookConfiguration = (
            _role(source, kind, body, metadata["name"])
            if kind in ROLE_KINDS
            else WebhookConfiguration(kind, body, source)
        )
        if item.key in seen:
            raise LoadError(f"{source}: {item.key} is defined twice (also in {seen[item.key]})")
        seen[item.key] = source
        if isinstance(item, Role):
            roles[item.key] = item
        else:
            webhooks[item.key] = item
    return Manifests(roles, webhooks, admission_policy)


def _is_the_guards(metadata: Mapping[str, Any]) -> bool:
    labels = metadata.get("labels")
    return isinstance(labels, Mapping) and labels.get("app.kubernetes.io/name") == "upgrade-guard"


def rendered_from(
    documents: Iterable[Document], *, validate: bool = True, stored: bool = False
) -> Rendered:
    """A rendered chart's CRDs (as ``crds_from`` reads them) and its other contracts."""
    kept = list(documents)
    return Rendered(crds_from(kept, validate=validate, stored=stored), manifests_from(kept))


def read_manifests(argument: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Manifests:
    """The roles and webhook configurations of a file, a directory or standard input
    (read once: a second reading of it gets the same bytes). An input that cannot hold one
    is not parsed."""
    documents: list[Document] = []
    for name, data in read_inputs(argument, max_bytes):
        if data.startswith(GZIP_MAGIC) or _MAY_HOLD.search(data):
            documents.extend(documents_of(name, data, max_bytes))
    return manifests_from(documents)
