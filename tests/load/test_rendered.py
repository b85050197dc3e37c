"""A rendered chart read whole: CRDs taken, roles and webhook configurations read, every other
kind ignored without error, Helm's hooks left out; bad roles named, never a traceback."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from upgrade_guard.load.documents import LoadError, documents_of
from upgrade_guard.load.rendered import Rendered, read_manifests, rendered_from

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object}}
"""
STREAM = f"""\
---
# Source: operator/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata: {{name: operator}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: operator}}
rules:
  - apiGroups: [example.com]
    resources: [widgets, widgets/status]
    verbs: [get, list, watch, update]
  - nonResourceURLs: [/metrics]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: leader-election, namespace: ops}}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: guard
  annotations: {{helm.sh/hook: pre-upgrade}}
rules: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: operator-webhook
  annotations: {{upgrade-guard.io/admission-contract: "3"}}
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: operator-webhook}}
webhooks: []
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: operator}}
spec: {{}}
---
{CRD}"""


def _rendered(text: str) -> Rendered:
    return rendered_from(documents_of("rendered.yaml", text.encode()))


def test_a_whole_rendered_chart_is_read() -> None:
    rendered = _rendered(STREAM)
    assert list(rendered.crds) == ["widgets.example.com"]
    assert list(rendered.manifests.roles) == ["ClusterRole operator", "Role ops/leader-election"]
    assert list(rendered.manifests.webhooks) == [
        "ValidatingWebhookConfiguration operator-webhook",
        "MutatingWebhookConfiguration operator-webhook",
    ]
    role = rendered.manifests.roles["ClusterRole operator"]
    assert [str(p) for p in role.permissions()][:3] == [
        "get widgets.example.com",
        "get widgets.example.com/status",
        "list widgets.example.com",
    ]
    assert len(role.permissions()) == 9  # 4 verbs x 2 resources, and one URL


def test_a_list_is_looked_into() -> None:
    text = (
        '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion":'
        ' "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "a"},'
        ' "rules": []}]}'
    )
    assert list(_rendered(text).manifests.roles) == ["ClusterRole a"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {}\n",
            r"rendered\.yaml \(document 1\): ClusterRole without metadata\.name",
            id="no name",
        ),
        pytest.param(
            "kind: Role\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: r}\n"
            "rules: {verbs: [get]}\n",
            r"rendered\.yaml \(document 1\): Role r: rules must be a list",
            id="rules a mapping",
        ),
        pytest.param(
            "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: r}\n"
            "rules: [{verbs: get}]\n",
            r"ClusterRole r: rules\[0\]: verbs must be a list of strings",
            id="verbs a string",
        ),
        pytest.param(
            "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: r}\n"
            "---\nkind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\n"
            "metadata: {name: r}\n",
            r"\(document 2\): ClusterRole r is defined twice \(also in rendered\.yaml"
            r" \(document 1\)\)",
            id="twice",
        ),
    ],
)
def test_bad_roles_are_named(document: str, message: str) -> None:
    with pytest.raises(LoadError, match=message):
        _rendered(document)


def test_kinds_of_other_groups_are_ignored() -> None:
    text = "apiVersion: example.com/v1\nkind: ClusterRole\nmetadata: {}\n"
    assert not _rendered(text).manifests.roles


def test_standard_input_is_read_once_for_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(STREAM.encode())))
    first = read_manifests("-")
    assert read_manifests("-") == first
    assert len(first.roles) == 2


def test_inputs_without_roles_are_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "broken.yaml").write_text("a: [\n")  # never parsed: it cannot hold one
    assert read_manifests(str(tmp_path)).roles == {}
