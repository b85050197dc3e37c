"""Proof that the test control plane is a real apiserver: CRDs, RBAC, and what the
apiserver itself does with a CRD change (refusals, pruning, defaulting, ratcheting).
These are the facts the engine's rules are held to."""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from testenv import JSON, MINORS, NEWEST_MINOR, Cluster, CRDTrial, KubeError, evolve, wait_for

GROUP = "testenv.upgrade-guard.dev"


def widget_crd(
    spec_props: JSON,
    *,
    plural: str,
    versions: tuple[str, ...] = ("v1",),
    storage: str | None = None,
    scope: str = "Namespaced",
    spec_extra: JSON | None = None,
) -> JSON:
    """A CRD whose every version has ``spec`` with ``spec_props`` (and ``spec_extra``
    keywords on the ``spec`` schema itself, e.g. ``required``)."""
    storage = storage or versions[-1]
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": copy.deepcopy(spec_props),
                **copy.deepcopy(spec_extra or {}),
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].title()},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == storage,
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                    "subresources": {"status": {}},
                }
                for v in versions
            ],
        },
    }


def unique_plural(stem: str) -> str:
    return f"{stem}{secrets.token_hex(3)}s"


def obj(name: str, **spec: Any) -> JSON:
    return {"metadata": {"name": name}, "spec": spec}


def test_crd_custom_resources_and_rbac(cluster: Cluster, namespace: str) -> None:
    plural = unique_plural("gadget")
    trial = CRDTrial(cluster.admin, namespace)
    crd = widget_crd({"size": {"type": "integer"}, "color": {"type": "string"}}, plural=plural)
    trial.apply_crd(crd).expect_allowed()
    trial.create(obj("one", size=1, color="red")).expect_allowed()
    trial.create(obj("two", size=2)).expect_allowed()
    assert trial.get("one")["spec"] == {"size": 1, "color": "red"}
    items = cluster.admin.get(trial.path())["items"]
    assert sorted(i["metadata"]["name"] for i in items) == ["one", "two"]

    # The official client sees the same objects (admin kubeconfig).
    custom = k8s.CustomObjectsApi(cluster.api_client)
    listed: Any = custom.list_namespaced_custom_object(GROUP, "v1", namespace, plural)
    assert len(listed["items"]) == 2

    # A ServiceAccount that may only read them.
    reader = cluster.make_service_account(
        namespace, [{"apiGroups": [GROUP], "resources": [plural], "verbs": ["get", "list"]}]
    )
    sa = cluster.client(reader)
    assert len(sa.get(trial.path())["items"]) == 2
    with pytest.raises(KubeError) as denied:
        sa.create(trial.path(), {"apiVersion": f"{GROUP}/v1", "kind": crd["spec"]["names"]["kind"],
                                 "metadata": {"name": "three"}})  # fmt: skip
    assert denied.value.code == 403
    assert f'cannot create resource "{plural}" in API group "{GROUP}"' in denied.value.message
    with pytest.raises(KubeError) as denied:
        sa.get(f"/api/v1/namespaces/{namespace}/secrets")
    assert denied.value.code == 403
    # Through the official client with the SA's kubeconfig: 403 too.
    sa_api = cluster.control_plane.api_client(reader)
    with pytest.raises(k8s.ApiException) as api_denied:
        k8s.CoreV1Api(sa_api).list_namespaced_config_map(namespace)
    assert api_denied.value.status == 403

    # A token user with no RBAC rules at all.
    alice = cluster.control_plane.client_for("restricted-alice")
    with pytest.raises(KubeError) as denied:
        alice.get(trial.path())
    assert denied.value.code == 403
    assert 'User "restricted-alice" cannot list resource' in denied.value.message


def test_removing_a_stored_version_is_refused(cluster: Cluster, namespace: str) -> None:
    plural = unique_plural("storedver")
    props = {"size": {"type": "integer"}}
    a = widget_crd(props, plural=plural, versions=("v1alpha1",))
    both = widget_crd(props, plural=plural, versions=("v1alpha1", "v1"), storage="v1")
    only_v1 = widget_crd(props, plural=plural, versions=("v1",))

    evo = evolve(cluster.admin, a, both, [obj("old", size=1)], namespace=namespace)
    evo.crd_update.expect_allowed()
    # The apiserver appends the new storage version; it never drops v1alpha1 by itself.
    assert evo.trial.stored_versions() == ["v1alpha1", "v1"]

    refused = evo.trial.apply_crd(only_v1)
    message = refused.expect_refused(
        'status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions; '
        "v1alpha1 was previously a storage version, and must remain in spec.versions until a "
        "storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 "
        "from status.storedVersions",
        code=422,
    )
    assert message.startswith(
        f'CustomResourceDefinition.apiextensions.k8s.io "{plural}.{GROUP}" is invalid'
    )
    # The object stored as v1alpha1 still reads under both versions.
    assert evo.trial.get("old", version="v1alpha1")["spec"] == {"size": 1}
    assert evo.trial.get("old", version="v1")["spec"] == {"size": 1}


def test_scope_change_is_refused(cluster: Cluster, namespace: str) -> None:
    plural = unique_plural("scoped")
    props = {"size": {"type": "integer"}}
    evo = evolve(
        cluster.admin,
        widget_crd(props, plural=plural),
        widget_crd(props, plural=plural, scope="Cluster"),
        [obj("x", size=1)],
        namespace=namespace,
    )
    evo.crd_update.expect_refused(
        'spec.scope: Invalid value: "Cluster": field is immutable', code=422
    )


def test_pruning_drops_a_removed_property_on_read_and_loses_it_on_write(
    cluster: Cluster, namespace: str
) -> None:
    plural = unique_plural("pruned")
    with_legacy = {"size": {"type": "integer"}, "legacy": {"type": "string"}}
    without = {"size": {"type": "integer"}}
    a = widget_crd(with_legacy, plural=plural)
    evo = evolve(
        cluster.admin,
        a,
        widget_crd(without, plural=plural),
        [obj("keep", size=1, legacy="precious"), obj("touched", size=1, legacy="precious")],
        namespace=namespace,
    )
    evo.crd_update.expect_allowed()  # no validation failure: silent
    t = evo.trial
    for name in ("keep", "touched"):
        t.wait_read(name, lambda o: "legacy" not in o["spec"], what="legacy pruned on read")
    # An unknown field sent by a client is dropped as well (and reported as a warning only).
    created = t.create(obj("new", size=2, legacy="sent")).expect_allowed()
    assert created["spec"] == {"size": 2}

    # A write under the new schema stores the pruned object: the value is gone for good.
    t.update("touched", lambda o: o["spec"].update(size=5)).expect_allowed()
    # Re-adding the property brings back what was only pruned on read, not what was written.
    t.apply_crd(a).expect_allowed()
    t.wait_read("keep", lambda o: o["spec"].get("legacy") == "precious", what="legacy back")
    assert t.get("touched")["spec"] == {"size": 5}


def test_defaulting_applies_a_new_default_to_untouched_objects_on_read(
    cluster: Cluster, namespace: str
) -> None:
    plural = unique_plural("defaulted")
    props = {"size": {"type": "integer"}, "mode": {"type": "string"}}
    props_default = {"size": {"type": "integer"}, "mode": {"type": "string", "default": "fast"}}
    evo = evolve(
        cluster.admin,
        widget_crd(props, plural=plural),
        widget_crd(props_default, plural=plural),
        [obj("untouched", size=1), obj("explicit", size=1, mode="slow")],
        namespace=namespace,
    )
    evo.crd_update.expect_allowed()
    assert "mode" not in evo.stored[0]["spec"]
    t = evo.trial
    t.wait_read("untouched", lambda o: o["spec"].get("mode") == "fast", what="default on read")
    assert t.get("explicit")["spec"]["mode"] == "slow"
    assert t.create(obj("fresh", size=3)).expect_allowed()["spec"]["mode"] == "fast"


@pytest.mark.parametrize("minor", MINORS)
def test_ratcheting_keeps_an_unchanged_invalid_value_on_update_but_not_on_create(
    cluster_at: Callable[[str], Cluster], namespace: str, minor: str
) -> None:
    cluster = cluster_at(minor)
    plural = unique_plural("ratchet")
    loose = {"replicas": {"type": "integer", "maximum": 10}, "note": {"type": "string"}}
    tight = {"replicas": {"type": "integer", "maximum": 5}, "note": {"type": "string"}}
    evo = evolve(
        cluster.admin,
        widget_crd(loose, plural=plural),
        widget_crd(tight, plural=plural),
        [obj("legacy", replicas=8, note="a")],
        namespace=namespace,
    )
    evo.crd_update.expect_allowed()  # the apiserver does not look at stored objects
    t = evo.trial
    expected = (
        "spec.replicas: Invalid value: 8: spec.replicas in body should be less than or equal to 5"
    )

    # CREATE is never ratcheted (polled: the handler picks up the new schema asynchronously).
    def create_refused() -> str | None:
        attempt = t.create(obj(f"new-{secrets.token_hex(2)}", replicas=8), dry_run=True)
        return None if attempt.allowed else attempt.expect_refused(expected, code=422)

    wait_for(create_refused, timeout=10, what="tightened maximum in force")

    # UPDATE touching another field: the unchanged invalid value is ratcheted.
    updated = t.update("legacy", lambda o: o["spec"].update(note="b")).expect_allowed()
    assert updated["spec"] == {"replicas": 8, "note": "b"}
    # UPDATE changing the invalid value to another invalid value: validated, refused.
    t.update("legacy", lambda o: o["spec"].update(replicas=7)).expect_refused(
        "spec.replicas: Invalid value: 7: spec.replicas in body should be less than or equal to 5"
    )
    # A merge patch that leaves it alone is ratcheted as well.
    t.patch("legacy", {"spec": {"note": "c"}}).expect_allowed()


INT = {"type": "integer"}
STR = {"type": "string"}
RATCHET_CASES: dict[str, tuple[JSON, JSON | None, str]] = {
    # name: (tightened spec props, tightened spec_extra, expected UPDATE outcome: "" = allowed,
    #        else a fragment of the refusal). Stored object: {"replicas": 8, "tier": "gold"};
    # the UPDATE changes only spec.note.
    "enum-value-removed": (
        {"replicas": INT, "note": STR, "tier": {"type": "string", "enum": ["silver"]}},
        None,
        "",
    ),
    # Ratcheting is decided per node of the schema walk: an allOf attached to the unchanged
    # field itself is ratcheted; the same bound in an allOf of the (changed) parent is not.
    "maximum-in-allOf-on-the-field": (
        {"replicas": {**INT, "allOf": [{"maximum": 5}]}, "note": STR, "tier": STR},
        None,
        "",
    ),
    "maximum-in-allOf-on-the-parent": (
        {"replicas": INT, "note": STR, "tier": STR},
        {"allOf": [{"properties": {"replicas": {"maximum": 5}}}]},
        "spec.replicas: Invalid value: 8: spec.replicas in body should be less than or equal to 5",
    ),
    "newly-required-field": (
        {"replicas": INT, "note": STR, "tier": STR, "owner": STR},
        {"required": ["owner"]},
        "spec.owner: Required value",
    ),
    "cel-rule-on-the-field": (
        {
            "replicas": {**INT, "x-kubernetes-validations": [{"rule": "self <= 5"}]},
            "note": STR,
            "tier": STR,
        },
        None,
        "",
    ),
    "cel-rule-on-the-parent": (
        {"replicas": INT, "note": STR, "tier": STR},
        {"x-kubernetes-validations": [{"rule": "self.replicas <= 5", "message": "too many"}]},
        "spec: Invalid value: too many",
    ),
}


# RATCHET_CASES whose UPDATE the oldest minor's apiserver answers otherwise: case -> outcome.
RATCHET_ON_OLDEST: dict[str, str] = {
    # 1.32 names the value's CEL type where 1.35 leaves it out.
    "cel-rule-on-the-parent": 'spec: Invalid value: "object": too many',
}


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case", list(RATCHET_CASES))
def test_ratcheting_matrix(
    cluster_at: Callable[[str], Cluster], namespace: str, case: str, minor: str
) -> None:
    """Which tightenings an UPDATE that leaves the offending value alone survives, on the
    newest and the oldest minor (issue 38)."""
    cluster = cluster_at(minor)
    tight_props, tight_extra, expected = RATCHET_CASES[case]
    if minor != NEWEST_MINOR:
        expected = RATCHET_ON_OLDEST.get(case, expected)
    plural = unique_plural("matrix")
    loose = {"replicas": INT, "note": STR, "tier": STR}
    evo = evolve(
        cluster.admin,
        widget_crd(loose, plural=plural),
        widget_crd(tight_props, plural=plural, spec_extra=tight_extra),
        [obj("legacy", replicas=8, tier="gold", note="a")],
        namespace=namespace,
    )
    evo.crd_update.expect_allowed()
    t = evo.trial

    def create_refused() -> bool:
        return not t.create(obj("fresh", replicas=8, tier="gold"), dry_run=True).allowed

    wait_for(create_refused, timeout=10, what="tightened schema in force for CREATE")
    update = t.update("legacy", lambda o: o["spec"].update(note="b"))
    if expected:
        update.expect_refused(expected)
    else:
        update.expect_allowed()
