"""The loader accepts and refuses the schema shapes around ``additionalProperties`` and null
positions as kube-apiserver v1.35.4 does (each CRD is created with dryRun=All, as JSON, the
way helm sends it). A keyword set to null is absent (a Go pointer); a property set to null is
an empty schema, which has no type."""

from __future__ import annotations

from typing import Any

import pytest

from testenv import Cluster, KubeError
from upgrade_guard.crd import Source
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import Document, LoadError

GROUP = "shapes.upgrade-guard.dev"
OBJECT = {"type": "object"}
STRING = {"type": "string"}

# name: (schema of spec.m, accepted by the apiserver)
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "additionalProperties true": ({**OBJECT, "additionalProperties": True}, True),
    "additionalProperties false": ({**OBJECT, "additionalProperties": False}, True),
    "additionalProperties true beside properties": (
        {**OBJECT, "properties": {"x": STRING}, "additionalProperties": True},
        True,
    ),
    "additionalProperties false beside properties": (
        {**OBJECT, "properties": {"x": STRING}, "additionalProperties": False},
        False,
    ),
    "additionalProperties schema beside properties": (
        {**OBJECT, "properties": {"x": STRING}, "additionalProperties": STRING},
        False,
    ),
    "additionalProperties an empty schema": ({**OBJECT, "additionalProperties": {}}, False),
    # kubectl apply drops the null and so succeeds; helm sends it and is refused.
    "a property that is null": ({**OBJECT, "properties": {"x": None}}, False),
    "not null": ({**STRING, "not": None}, True),
    "items true": ({"type": "array", "items": True}, False),
}


def _crd(m: dict[str, Any]) -> dict[str, Any]:
    spec = {"type": "object", "properties": {"m": m}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"shapes.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "shapes", "singular": "shape", "kind": "Shape"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


@pytest.mark.parametrize("case", CASES)
def test_loader_agrees_with_the_apiserver_on_schema_shapes(cluster: Cluster, case: str) -> None:
    m, accepted = CASES[case]
    crd = _crd(m)
    try:
        cluster.admin.create(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, dryRun="All"
        )
        apiserver = True
    except KubeError:
        apiserver = False
    try:
        crds_from([Document(Source("shapes.yaml"), 1, crd)])
        loader = True
    except LoadError:
        loader = False
    assert (apiserver, loader) == (accepted, accepted)
