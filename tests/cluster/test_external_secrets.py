"""External-secrets' chart 0.15.0 -> 0.16.0 (/work/shared/charts/external-secrets, see its
SOURCE.txt), rendered by the real helm, unmodified, held to the real apiserver: every error
`upgrade-guard diff` reports for the pair has a witness here, an object stored under the old
CRDs that the new ones hurt exactly as the finding says.

The old CRDs are applied, one object per CRD is stored at its storage version, the new CRDs
are applied, and each error's claim is tried. The chart's conversion webhook does not run
here; to give an object managedFields at v1alpha1 (a GitOps tool applying a v1alpha1
manifest), strategy None stands in for it for one write whose fields mean the same at
v1alpha1 and v1beta1, and the chart's own CRD is re-applied before the upgrade."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from testenv import JSON, Cluster, CRDTrial, Kube, KubeError

REPO = Path(__file__).resolve().parents[2]
CHARTS = (
    Path(os.environ.get("UPGRADE_GUARD_SHARED", REPO.parent / "shared"))
    / "charts"
    / "external-secrets"
)
OLD, NEW = "0.15.0", "0.16.0"
GROUP = "external-secrets.io"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"

FAKE_DATA = [{"key": "/plain", "value": "v"}, {"key": "/map", "valueMap": {"a": "b"}}]
STORE = {"provider": {"fake": {"data": FAKE_DATA}}}
EXTERNAL_SECRET = {
    "secretStoreRef": {"name": "fake", "kind": "SecretStore"},
    "target": {"name": "target"},
    "data": [{"secretKey": "k", "remoteRef": {"key": "/plain"}}],
}
PUSH = {"secretStoreRefs": [{"name": "fake"}], "selector": {"secret": {"name": "source"}}}
# One object per CRD (by plural), valid at the old chart's storage version.
SPECS: dict[str, JSON] = {
    "acraccesstokens": {"auth": {"workloadIdentity": {}}, "registry": "r.azurecr.io"},
    "clusterexternalsecrets": {"externalSecretSpec": EXTERNAL_SECRET},
    "clustergenerators": {"kind": "UUID", "generator": {"uuidSpec": {}}},
    "clusterpushsecrets": {"pushSecretSpec": PUSH},
    "clustersecretstores": STORE,
    "ecrauthorizationtokens": {"region": "eu-west-1"},
    "externalsecrets": EXTERNAL_SECRET,
    "fakes": {"data": {"k": "v"}},
    "gcraccesstokens": {
        "auth": {"secretRef": {"secretAccessKeySecretRef": {"name": "gcr", "key": "json"}}},
        "projectID": "p",
    },
    "generatorstates": {"resource": {"kind": "UUID"}, "state": {"k": "v"}},
    "githubaccesstokens": {
        "appID": "1",
        "installID": "2",
        "auth": {"privateKey": {"secretRef": {"name": "gh", "key": "pem"}}},
    },
    "grafanas": {
        "url": "https://grafana.example",
        "auth": {"token": {"name": "g", "key": "t"}},
        "serviceAccount": {"name": "sa", "role": "Viewer"},
    },
    "passwords": {"length": 16, "allowRepeat": False, "noUpper": False},
    "pushsecrets": PUSH,
    "quayaccesstokens": {"robotAccount": "robot", "serviceAccountRef": {"name": "sa"}},
    "secretstores": STORE,
    "stssessiontokens": {"region": "eu-west-1"},
    "uuids": {},
    "vaultdynamicsecrets": {"path": "db/creds", "provider": {"server": "https://vault"}},
    "webhooks": {"url": "https://hook.example", "result": {"jsonPath": "$.token"}},
}
# The CRDs that serve v1alpha1 beside the storage version v1beta1 in 0.15.0 and drop it in
# 0.16.0, each with an object that means the same at both versions (no field either lacks).
SAME_AT_BOTH: dict[str, JSON] = {
    "clustersecretstores": {"provider": {"fake": {"data": [{"key": "/plain", "value": "v"}]}}},
    "externalsecrets": EXTERNAL_SECRET,
    "secretstores": {"provider": {"fake": {"data": [{"key": "/plain", "value": "v"}]}}},
}
# What `diff` reports as errors for the pair: (code, CRD, path).
EXPECTED_ERRORS = {
    ("UG105", "clustersecretstores.external-secrets.io", None),
    ("UG105", "externalsecrets.external-secrets.io", None),
    ("UG105", "secretstores.external-secrets.io", None),
    ("UG106", "clusterexternalsecrets.external-secrets.io", None),
    ("UG106", "clustersecretstores.external-secrets.io", None),
    ("UG106", "externalsecrets.external-secrets.io", None),
    ("UG106", "secretstores.external-secrets.io", None),
    ("UG201", "clustersecretstores.external-secrets.io", "spec.provider.fake.data[].valueMap"),
    ("UG201", "secretstores.external-secrets.io", "spec.provider.fake.data[].valueMap"),
}


@pytest.fixture(autouse=True)
def _requires_the_charts() -> None:
    if not CHARTS.is_dir():
        message = f"external-secrets' charts are not at {CHARTS} (UPGRADE_GUARD_SHARED)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)


@dataclass
class Upgrade:
    """Both rendered CRD sets, the diff's errors, and the trials after the upgrade."""

    old: dict[str, JSON]  # CRD name -> the 0.15.0 CRD
    errors: list[JSON]
    trials: dict[str, CRDTrial]  # CRD name -> its trial, the 0.16.0 CRD applied
    before: dict[str, JSON]  # CRD name -> its object as stored under 0.15.0
    served_at_v1alpha1: set[str]  # the resources external-secrets.io/v1alpha1 served before


def render(cluster: Cluster, version: str, tmp: Path) -> Path:
    chart = tmp / f"external-secrets-{version}"
    shutil.copytree(CHARTS / version, chart)
    out = subprocess.run(
        [str(cluster.binaries.helm), "template", "es", str(chart), "--namespace", "es"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    rendered = tmp / f"rendered-{version}.yaml"
    rendered.write_text(out)
    return rendered


def crds_of(rendered: Path) -> dict[str, JSON]:
    docs = yaml.safe_load_all(rendered.read_text())
    return {
        d["metadata"]["name"]: d for d in docs if d and d.get("kind") == "CustomResourceDefinition"
    }


def served(kube: Kube, group_version: str) -> set[str]:
    try:
        return {r["name"] for r in kube.get(f"/apis/{group_version}")["resources"]}
    except KubeError as err:
        if err.code == 404:
            return set()
        raise


def apply_patch(
    trial: CRDTrial, name: str, version: str, spec: JSON, manager: str, *, force: bool = False
) -> JSON:
    assert trial.crd is not None
    body = {
        "apiVersion": f"{GROUP}/{version}",
        "kind": trial.crd["spec"]["names"]["kind"],
        "metadata": {"name": name},
        "spec": spec,
    }
    path = trial.path(version, name)
    result: JSON = trial.kube.patch(path, body, APPLY, fieldManager=manager, force=force)
    return result


@pytest.fixture(scope="module")
def upgrade(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Upgrade:
    tmp = tmp_path_factory.mktemp("external-secrets")
    files = {v: render(cluster, v, tmp) for v in (OLD, NEW)}
    diff = subprocess.run(
        [str(cluster.venv_bin / "upgrade-guard"), "diff", str(files[OLD]), str(files[NEW]),
         "--kube-version", "1.35", "--output", "json"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert diff.returncode == 1, diff.stderr
    errors = [f for f in json.loads(diff.stdout)["findings"] if f["severity"] == "error"]
    old, new = crds_of(files[OLD]), crds_of(files[NEW])
    assert sorted(old) == sorted(new) and len(old) == 20
    kube = cluster.admin
    namespace = "external-secrets-upgrade"
    trials = {name: CRDTrial(kube, namespace) for name in old}
    before: dict[str, JSON] = {}
    for name, crd in old.items():
        trial = trials[name]
        trial.apply_crd(crd).expect_allowed()
        plural = crd["spec"]["names"]["plural"]
        created = trial.create({"metadata": {"name": "stored"}, "spec": SPECS[plural]})
        before[name] = created.expect_allowed()
    for plural, spec in SAME_AT_BOTH.items():
        name = f"{plural}.{GROUP}"
        trial = trials[name]
        stand_in = copy.deepcopy(old[name])
        stand_in["spec"]["conversion"] = {"strategy": "None"}
        trial.apply_crd(stand_in).expect_allowed()
        for version in ("v1alpha1", "v1beta1"):
            written = apply_patch(trial, f"applied-at-{version}", version, spec, "gitops")
            assert {m["apiVersion"] for m in written["metadata"]["managedFields"]} == {
                f"{GROUP}/{version}"
            }
        trial.apply_crd(old[name]).expect_allowed()
    served_at_v1alpha1 = served(kube, f"{GROUP}/v1alpha1")
    for name, crd in new.items():
        trials[name].apply_crd(crd).expect_allowed()
    return Upgrade(old, errors, trials, before, served_at_v1alpha1)


def test_the_diff_reports_these_errors(upgrade: Upgrade) -> None:
    """Each with its witness (UG106's: the 0.15.0 CRD applied again is refused)."""
    assert {(f["code"], f["crd"], f["path"]) for f in upgrade.errors} == EXPECTED_ERRORS
    assert [f for f in upgrade.errors if not f["proven"]] == []
    rollbacks = [f["witness"] for f in upgrade.errors if f["code"] == "UG106"]
    assert {(w["operation"], w["version"], w["message"]) for w in rollbacks} == {
        ("apply-old-crd", "v1beta1", 'Invalid value: "v1": missing from spec.versions')
    }


def test_stored_objects_read_back_but_for_the_pruned_value_map(upgrade: Upgrade) -> None:
    """Nothing but UG201's field changes in what the stored objects read back as."""
    for name, trial in upgrade.trials.items():
        got = trial.get("stored")
        expected = copy.deepcopy(upgrade.before[name]["spec"])
        if name.split(".")[0] in ("secretstores", "clustersecretstores"):
            del expected["provider"]["fake"]["data"][1]["valueMap"]
        assert got["spec"] == expected, name


@pytest.mark.parametrize("crd", ["clustersecretstores", "externalsecrets", "secretstores"])
def test_ug105_requests_at_v1alpha1_get_404(upgrade: Upgrade, crd: str) -> None:
    """UG105: v1alpha1 was served for the CRD; now a read there is 404 Not Found."""
    assert crd in upgrade.served_at_v1alpha1
    trial = upgrade.trials[f"{crd}.{GROUP}"]
    assert crd not in served(trial.kube, f"{GROUP}/v1alpha1")
    for path in (trial.path("v1alpha1", "stored"), trial.path("v1alpha1")):
        with pytest.raises(KubeError) as refused:
            trial.kube.get(path)
        assert refused.value.code == 404


@pytest.mark.parametrize("crd", ["clustersecretstores", "externalsecrets", "secretstores"])
def test_ug105_server_side_apply_of_an_object_applied_at_v1alpha1_fails(
    upgrade: Upgrade, crd: str
) -> None:
    """UG105: an apply of the object whose managedFields record v1alpha1 fails with 500, at
    any version; the one applied at v1beta1 applies. A merge patch (not an apply) succeeds
    and clears the object's managedFields, every entry; the apply then succeeds (forced: with
    no managedFields the fields it sets differently belong to "before-first-apply")."""
    trial = upgrade.trials[f"{crd}.{GROUP}"]
    spec = SAME_AT_BOTH[crd]
    for version in ("v1", "v1beta1"):
        with pytest.raises(KubeError) as refused:
            apply_patch(trial, "applied-at-v1alpha1", version, spec, "gitops")
        assert refused.value.code == 500
        assert f"request to convert CR to an invalid group/version: {GROUP}/v1alpha1" in (
            refused.value.message
        )
    apply_patch(trial, "applied-at-v1beta1", "v1", spec, "gitops")
    path = trial.path("v1", "applied-at-v1alpha1")
    patched = trial.kube.patch(path, {"metadata": {"labels": {"touched": "yes"}}}, MERGE)
    assert "managedFields" not in patched["metadata"]
    apply_patch(trial, "applied-at-v1alpha1", "v1", spec, "gitops", force=True)


@pytest.mark.parametrize(
    "crd", ["clusterexternalsecrets", "clustersecretstores", "externalsecrets", "secretstores"]
)
def test_ug106_a_rollback_of_the_crd_is_refused(upgrade: Upgrade, crd: str) -> None:
    """UG106: the 0.16.0 CRD put v1 in status.storedVersions (nothing need be written at v1);
    re-applying the 0.15.0 CRD, which does not list v1, is refused: the witness's message."""
    name = f"{crd}.{GROUP}"
    trial = upgrade.trials[name]
    assert trial.stored_versions() == ["v1beta1", "v1"]
    trial.apply_crd(upgrade.old[name]).expect_refused(
        'status.storedVersions[1]: Invalid value: "v1": missing from spec.versions', code=422
    )


@pytest.mark.parametrize("crd", ["clustersecretstores", "secretstores"])
def test_ug201_value_map_is_pruned_on_read(upgrade: Upgrade, crd: str) -> None:
    """UG201 at v1beta1 spec.provider.fake.data[].valueMap: stored under 0.15.0, it is gone
    from reads at v1beta1 and v1."""
    name = f"{crd}.{GROUP}"
    trial = upgrade.trials[name]
    assert upgrade.before[name]["spec"]["provider"]["fake"]["data"][1]["valueMap"] == {"a": "b"}
    for version in ("v1beta1", "v1"):
        item = trial.get("stored", version=version)["spec"]["provider"]["fake"]["data"][1]
        assert item == {"key": "/map"}
