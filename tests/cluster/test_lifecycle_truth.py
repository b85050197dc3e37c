"""The lifecycle rules' claims about the apiserver, held to a real kube-apiserver.

UG805 says a storage switch to a version the release before did not serve cannot be rolled
back; UG807 says a version that was ever the storage version cannot leave spec.versions
until a storage migration trims status.storedVersions. Each test walks a CRD through the
releases of the refused history and of the nearest allowed one, and asks verify-lifecycle
about the same releases.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from testenv import Cluster, CRDTrial, ToolRunner
from testenv.truth import TOUCH, crd_body, root_schema, version_entry
from upgrade_guard.commands.verify_lifecycle import verify_lifecycle
from upgrade_guard.crd import Crd
from upgrade_guard.lifecycle.timeline import Release
from upgrade_guard.policy import DEFAULT_POLICY, Policy, parse_policy

SCHEMA = root_schema({"size": {"type": "string"}})
JSON = dict[str, Any]


def lifecycle_codes(*crds: JSON, policy: Policy = DEFAULT_POLICY) -> set[str]:
    """What verify-lifecycle refuses over releases carrying these CRDs, one a month."""
    releases = [
        Release(f"v0.{index}.0", datetime(2024, index + 1, 1, tzinfo=UTC), {"c": Crd(body)})
        for index, body in enumerate(crds)
    ]
    outcome = verify_lifecycle(releases, policy)
    return {finding.code for finding in outcome.findings if finding.refuses}


def widget(name: str) -> JSON:
    return {"metadata": {"name": name}, "spec": {"size": "M"}}


def test_ug805_a_rollback_needs_the_release_before_to_serve_the_new_storage_version(
    cluster: Cluster, namespace: str
) -> None:
    plural = f"rollbacks{secrets.token_hex(3)}"
    beta_only = crd_body(plural, [version_entry("v1beta1", SCHEMA)])
    both_served = crd_body(
        plural, [version_entry("v1beta1", SCHEMA), version_entry("v1", SCHEMA, storage=False)]
    )
    switched = crd_body(
        plural, [version_entry("v1beta1", SCHEMA, storage=False), version_entry("v1", SCHEMA)]
    )
    assert lifecycle_codes(beta_only, switched) == {"UG805"}
    assert lifecycle_codes(beta_only, both_served, switched) == set()

    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(beta_only).expect_allowed()
    trial.create(widget("old"), version="v1beta1").expect_allowed()
    trial.apply_crd(switched).expect_allowed()
    trial.create(widget("new"), version="v1").expect_allowed()
    assert trial.stored_versions() == ["v1beta1", "v1"]
    # Refused: back to the release that did not serve v1.
    trial.apply_crd(beta_only).expect_refused("storedVersions")
    # Allowed: back to a release that served both; what v1 stored reads back.
    trial.apply_crd(both_served).expect_allowed()
    assert trial.get("new", version="v1beta1")["spec"]["size"] == "M"


def test_ug807_a_former_storage_version_leaves_only_after_a_storage_migration(
    cluster: Cluster, namespace: str
) -> None:
    plural = f"migrations{secrets.token_hex(3)}"
    alpha_storage = crd_body(
        plural, [version_entry("v1alpha1", SCHEMA), version_entry("v1", SCHEMA, storage=False)]
    )
    switched = crd_body(
        plural, [version_entry("v1alpha1", SCHEMA, storage=False), version_entry("v1", SCHEMA)]
    )
    alpha_unserved = crd_body(
        plural,
        [
            version_entry("v1alpha1", SCHEMA, storage=False, served=False),
            version_entry("v1", SCHEMA),
        ],
    )
    removed = crd_body(plural, [version_entry("v1", SCHEMA)])
    history = (alpha_storage, switched, alpha_unserved, removed)
    assert lifecycle_codes(*history) == {"UG807"}
    migration = parse_policy(
        {
            "lifecycle": {
                "storage-migrations": [
                    {"crd": "c", "version": "v1alpha1", "release": "v0.3.0", "reason": "done"}
                ]
            }
        },
        "policy",
    )
    assert lifecycle_codes(*history, policy=migration) == set()

    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(alpha_storage).expect_allowed()
    trial.create(widget("old"), version="v1alpha1").expect_allowed()
    trial.apply_crd(switched).expect_allowed()
    trial.apply_crd(alpha_unserved).expect_allowed()
    # Refused: storedVersions still lists v1alpha1.
    trial.apply_crd(removed).expect_refused("storedVersions")
    # The migration: write every object back (now stored at v1), then trim storedVersions.
    trial.update("old", lambda o: o["spec"].update({TOUCH: "migrated"})).expect_allowed()
    status = trial.get_crd()
    status["status"]["storedVersions"] = ["v1"]
    cluster.admin.replace(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{trial.name}/status", status
    )
    # Allowed after it; the object reads back.
    trial.apply_crd(removed).expect_allowed()
    assert trial.get("old")["spec"]["size"] == "M"


def test_ug802_deprecated_true_warns_every_client_of_the_version(
    cluster: Cluster, namespace: str, kubectl: ToolRunner
) -> None:
    plural = f"warnings{secrets.token_hex(3)}"
    deprecated_beta = version_entry("v1beta1", SCHEMA, storage=False)
    deprecated_beta["deprecated"] = True
    crd = crd_body(plural, [deprecated_beta, version_entry("v1", SCHEMA)])
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(crd).expect_allowed()
    group = crd["spec"]["group"]

    def warned(version: str) -> str:
        done = kubectl("get", f"{plural}.{version}.{group}", "-n", namespace)
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert f"{group}/v1beta1 {crd['spec']['names']['kind']} is deprecated" in warned("v1beta1")
    assert "is deprecated" not in warned("v1")
