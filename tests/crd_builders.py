"""Small CRDs built in code, so each test shows only the part of a CRD it is about."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Outcome
from upgrade_guard.policy import DEFAULT_POLICY, Policy

NAME = "widgets.example.com"
# String fields whose CEL rule does and does not compile, for the rows that hold which CRDs
# (released ones are history) have their rules compiled.
COMPILING_RULE = {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 10"}]}
NOT_COMPILING_RULE = {"type": "string", "x-kubernetes-validations": [{"rule": "self.nosuch > 0"}]}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def spec_schema(**fields: Any) -> dict[str, Any]:
    """A root schema whose spec holds the given fields."""
    return obj(spec=obj(**fields))


def version(
    name: str = "v1", schema: Mapping[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": copy.deepcopy(schema or spec_schema())},
        "subresources": {"status": {}},
    }
    entry.update(extra)
    return entry


def crd(*versions: dict[str, Any], stored: list[str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "example.com",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
                "shortNames": ["wd"],
            },
            "scope": "Namespaced",
            "versions": list(versions) or [version()],
        },
    }
    body["spec"].update(spec)
    if stored is not None:
        body["status"] = {"storedVersions": stored}
    return body


def field_crd(node: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD whose only interesting part is spec.field."""
    return crd(version(schema=spec_schema(field=node)))


def compare(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    policy: Policy = DEFAULT_POLICY,
    kube_version: tuple[int, int] | None = None,
) -> Outcome:
    before = {NAME: Crd(old)} if old is not None else {}
    after = {NAME: Crd(new)} if new is not None else {}
    return engine.compare_crds(before, after, policy, kube_version)


def flagged(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, **kwargs: Any
) -> set[tuple[str, str | None]]:
    """(code, path) of every finding: the line tests draw, independent of message wording."""
    return {(f.code, f.path) for f in compare(old, new, **kwargs).findings}
