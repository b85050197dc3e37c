"""Smoke tests of the GitOps oracles (tools/gitops): Argo CD's own hook logic and Flux's own
HelmRelease types, built from Go modules. The chart tests use them on `helm template`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "tools" / "gitops" / "build.sh"
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="module")
def bin_dir() -> Path:
    found = subprocess.run([str(BUILD), "--print-bin-dir"], capture_output=True, text=True)
    if found.returncode != 0:
        message = f"the GitOps oracles are not built: run {BUILD.relative_to(REPO)}"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return Path(found.stdout.strip())


def hook(kind: str, name: str, annotations: dict[str, str]) -> str:
    return yaml.safe_dump(
        {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "annotations": annotations}}
    )


def test_argo_cd_classifies_a_helm_pre_upgrade_hook_as_presync(bin_dir: Path) -> None:
    stream = "---\n".join(
        [
            hook("Job", "guard", {
                "helm.sh/hook": "pre-upgrade",
                "helm.sh/hook-weight": "-5",
                "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
            }),
            hook("Job", "rollback-only", {"helm.sh/hook": "pre-rollback"}),
            # Any Argo CD hook annotation and the Helm ones are ignored.
            hook("Job", "both", {"argocd.argoproj.io/hook": "PostSync",
                                 "helm.sh/hook": "pre-install"}),
            hook("ConfigMap", "plain", {}),
        ]
    )  # fmt: skip
    result = subprocess.run(
        [str(bin_dir / "argocd-oracle")], input=stream, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert rows["guard"] == {
        "kind": "Job",
        "name": "guard",
        "hook": True,
        "phases": ["PreSync"],
        "deletePolicies": ["BeforeHookCreation", "HookSucceeded"],
        "wave": -5,
    }
    assert (rows["rollback-only"]["hook"], rows["rollback-only"]["phases"]) == (True, [])
    assert rows["both"]["phases"] == ["PostSync"]
    assert (rows["plain"]["hook"], rows["plain"]["phases"]) == (False, ["Sync"])


def test_flux_helmrelease_renders_the_crd_policy_with_fluxs_types(bin_dir: Path) -> None:
    tool = str(bin_dir / "flux-helmrelease")
    args = [tool, "-name", "op", "-chart", "example", "-source", "charts"]
    rendered = subprocess.run(args, capture_output=True, text=True, check=True)
    release = yaml.safe_load(rendered.stdout)
    assert release["apiVersion"] == "helm.toolkit.fluxcd.io/v2"
    assert (release["spec"]["install"]["crds"], release["spec"]["upgrade"]["crds"]) == (
        "Create",
        "Skip",
    )
    refused = subprocess.run([*args, "-upgrade-crds", "Replace"], capture_output=True, text=True)
    assert refused.returncode == 2
    assert "unknown CRD policy" in refused.stderr
