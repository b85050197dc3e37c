"""`diff` of whole rendered charts, as `helm template` (the real helm) prints them: the CRDs
compared as always, the operator's ClusterRoles and Roles for permissions removed (UG401, a
warning unless the policy makes it an error), every other kind ignored without error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cli.test_diff_cli import run
from load.helm_oracle import IN_CI, require_helm

REPO = Path(__file__).resolve().parents[2]
CERT_MANAGER = (
    Path(os.environ.get("UPGRADE_GUARD_SHARED", "/work/shared")) / "charts" / "cert-manager"
)
CHART_YAML = "apiVersion: v2\nname: operator\nversion: {version}\n"
ROLES = """\
apiVersion: v1
kind: ServiceAccount
metadata: {{name: {{{{ .Release.Name }}}}-operator}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {{{{ .Release.Name }}}}-operator}}
rules:
  - apiGroups: [example.io]
    resources: [backups, backups/status]
    verbs: [{verbs}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: leader-election, namespace: {{{{ .Release.Namespace }}}}}}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update]
"""


def render(helm: Path, chart: Path, out: Path, *values: str) -> Path:
    done = subprocess.run(
        [str(helm), "template", "rel", str(chart), "--namespace", "ops", *values],
        capture_output=True,
        text=True,
        check=True,
    )
    out.write_text(done.stdout)
    return out


def operator_chart(root: Path, version: str, verbs: str) -> Path:
    chart = root / version
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART_YAML.format(version=version))
    shutil.copy(
        REPO / "chart-snippets/example/1.0.0/templates/crds/backups.yaml", chart / "templates"
    )
    (chart / "templates" / "rbac.yaml").write_text(ROLES.format(verbs=verbs))
    return chart


@pytest.mark.parametrize(
    ("verbs", "policy", "code", "expected"),
    [
        pytest.param(
            "get, list",
            "profile: default\n",
            0,
            ["ClusterRole rel-operator: warning"],
            id="verb removed: warned",
        ),
        pytest.param(
            "get, list",
            "rules: {UG401: error}\n",
            1,
            ["ClusterRole rel-operator: error"],
            id="refused by the policy",
        ),
        pytest.param("'*'", "rules: {UG401: error}\n", 0, [], id="verbs into *: allowed"),
        pytest.param(
            "get, list, watch, patch", "rules: {UG401: error}\n", 0, [], id="verb added: allowed"
        ),
    ],
)
def test_rendered_charts_are_diffed_whole(
    tmp_path: Path, verbs: str, policy: str, code: int, expected: list[str]
) -> None:
    helm = require_helm()
    old = render(helm, operator_chart(tmp_path, "1.0.0", "get, list, watch"), tmp_path / "old.yaml")
    new = operator_chart(tmp_path, "2.0.0", verbs)
    rendered = subprocess.run(
        [str(helm), "template", "rel", str(new), "--namespace", "ops"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    (tmp_path / "policy.yaml").write_text(policy)
    args = ["diff", str(old), "-", "--policy", str(tmp_path / "policy.yaml"), "--output", "json"]
    result = run(*args, stdin=rendered)
    assert result.returncode == code, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert [f"{f['crd']}: {f['severity']}" for f in findings] == expected
    if expected:
        assert findings[0]["code"] == "UG401"
        assert findings[0]["old"] == [
            "watch backups.example.io",
            "watch backups.example.io/status",
        ]


def test_cert_manager_releases_rendered_by_helm(tmp_path: Path) -> None:
    """v1.18.0 -> v1.19.0 as helm renders them (CRDs on): the CRDs as the corpus pair, and
    the two ClusterRoles v1.19.0 no longer renders."""
    helm = require_helm()
    if not CERT_MANAGER.is_dir():
        message = f"cert-manager's charts are not at {CERT_MANAGER} (UPGRADE_GUARD_SHARED)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    sides = []
    for version in ("v1.18.0", "v1.19.0"):
        chart = tmp_path / version
        shutil.copytree(CERT_MANAGER / version, chart)
        sides.append(
            str(render(helm, chart, tmp_path / f"{version}.yaml", "--set", "crds.enabled=true"))
        )
    result = run("diff", *sides, "--output", "json")
    assert result.returncode == 1, result.stderr  # UG212 on Certificates, as in the corpus
    findings = json.loads(result.stdout)["findings"]
    roles = {f["crd"]: f["old"] for f in findings if f["code"] == "UG401"}
    # v1.19.0 merges the DNS01 and HTTP01 challenge roles into one: the controller keeps its
    # permissions, but a binding or a GitOps pin of either old name loses them.
    assert sorted(roles) == [
        "ClusterRole rel-cert-manager-dns01-controller-challenges",
        "ClusterRole rel-cert-manager-http01-controller-challenges",
    ]
    assert "create routes.route.openshift.io/custom-host" in roles[sorted(roles)[1]]
