"""Helm's release records, pure: decoding a Secret as Helm's default driver stores it, which
record an operation replaces (as pkg/action upgrade.go and rollback.go choose it), and what
Helm would delete. Each refusal beside the nearest case that passes."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest
import yaml

from crd_builders import crd
from upgrade_guard.crd import Crd
from upgrade_guard.judging import judge
from upgrade_guard.load.documents import LoadError
from upgrade_guard.load.helm_record import Record, decode, find_operation, record_name
from upgrade_guard.pipelines import hook_run
from upgrade_guard.policy import DEFAULT_POLICY
from upgrade_guard.subjects import HookSubject, Stored

MANIFEST = "---\n# Source: c/templates/crd.yaml\n{crd}\n---\napiVersion: v1\nkind: ConfigMap\n"


def secret(revision: int, status: str, manifest: str = "", chart: str = "c",
           hooks: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:  # fmt: skip
    """A release Secret's body as the apiserver returns it (data base64, Helm's own base64 of
    the gzipped JSON inside)."""
    body = {
        "name": "rel",
        "version": revision,
        "info": {"status": status},
        "manifest": manifest,
        "config": {"password": "never-read"},
        "chart": {"metadata": {"name": chart, "version": f"{revision}.0.0",
                               "annotations": {"upgrade-guard.io/controller-state-version": "2"}}},
        "hooks": [{"name": "rel-upgrade-guard", "kind": "Job"}, *hooks],
    }  # fmt: skip
    helm = base64.b64encode(gzip.compress(json.dumps(body).encode()))
    return {"data": {"release": base64.b64encode(helm).decode()}}


def records(*statuses: str) -> dict[int, Record]:
    return {
        n: decode(record_name("rel", n), secret(n, status))
        for n, status in enumerate(statuses, start=1)
        if status
    }


def test_decode_keeps_manifest_status_chart_and_hooks_never_values() -> None:
    text = json.dumps(crd())
    record = decode(
        "sh.helm.release.v1.rel.v3", secret(3, "pending-upgrade", MANIFEST.format(crd=text))
    )
    assert (record.revision, record.status, record.operation) == (3, "pending-upgrade", "upgrade")
    assert record.chart == "c-3.0.0" and record.hooks == ("Job/rel-upgrade-guard",)
    assert list(record.crds()) == [crd()["metadata"]["name"]]
    assert record.guard_policy is None


ROLE = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: op}\n"


def test_a_record_is_read_once_for_its_crds_and_its_roles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plugin and the pipeline each ask a record for its CRDs and its roles: one
    reading of the manifest answers both, each asking getting its own dict."""
    from upgrade_guard.load import helm_record

    manifest = MANIFEST.format(crd=json.dumps(crd())) + ROLE
    record = decode("sh.helm.release.v1.rel.v3", secret(3, "pending-upgrade", manifest))
    reads = []
    real = helm_record.documents_of
    monkeypatch.setattr(helm_record, "documents_of", lambda *a: reads.append(a) or real(*a))
    first = record.crds(normalize=True)
    first.clear()
    assert list(record.crds(normalize=True)) == [crd()["metadata"]["name"]]
    assert list(record.manifests().roles) == ["ClusterRole op"]
    assert len(reads) == 1
    assert list(record.crds()) == [crd()["metadata"]["name"]]  # as applied: read again
    assert len(reads) == 2


GUARD_CONFIGMAP = r"""apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}}}
data:
  images.yaml: "images: {{}}"
  policy.yaml: "controllers:\n  - crd: backups.example.io\n    finalizers: [example.io/cleanup]\n"
"""


def _in_a_list(manifest: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(manifest)]})


@pytest.mark.parametrize("listed", [False, True], ids=["hook", "list"])
@pytest.mark.parametrize(
    ("name", "policy"),
    [
        ("rel-upgrade-guard", {"controllers": [{"crd": "backups.example.io",
                                                "finalizers": ["example.io/cleanup"]}]}),
        ("rel-other", None),
    ],
)  # fmt: skip
def test_decode_keeps_the_policy_the_releases_guard_ran_with(
    name: str, policy: Any, listed: bool
) -> None:
    """The library's hook ConfigMap (RELEASE-upgrade-guard) holds the chart's policy: the
    replaced release's says what its controller handled. It is a hook of its own in releases
    of libraries before the List hook, an item of that List (named as it) since."""
    manifest = GUARD_CONFIGMAP.format(name=name)
    kind = "List" if listed else "ConfigMap"
    hook = {"name": name, "kind": kind, "manifest": _in_a_list(manifest) if listed else manifest}
    record = decode("sh.helm.release.v1.rel.v2", secret(2, "deployed", hooks=(hook,)))
    assert record.guard_policy == policy
    assert "never-read" not in repr(record)


POLICY = """---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: rel.ns.upgrade-guard.io
  labels: {{app.kubernetes.io/name: {name}}}
"""


@pytest.mark.parametrize(
    ("manifest", "applied"),
    [
        (POLICY.format(name="upgrade-guard"), True),
        (POLICY.format(name="kyverno"), False),  # another's admission policy
        (POLICY.format(name="upgrade-guard").replace("Policy\n", "PolicyBinding\n"), False),
        ("", False),
    ],
    ids=["the library's", "another's", "a binding alone", "none"],
)
def test_a_record_says_whether_it_applied_the_librarys_admission_policy(
    manifest: str, applied: bool
) -> None:
    record = decode("sh.helm.release.v1.rel.v2", secret(2, "deployed", manifest))
    assert record.manifests().admission_policy is applied
    assert record.manifests().roles == {}


def test_decode_refuses_what_is_not_a_record() -> None:
    with pytest.raises(LoadError, match="not a Helm release record"):
        decode("sh.helm.release.v1.rel.v1", {"data": {"release": "bm90IGd6aXA="}})


@pytest.mark.parametrize(
    ("statuses", "rendered", "pending", "current"),
    [
        (("pending-install",), 1, 1, None),
        (("deployed", "pending-upgrade"), 2, 2, 1),
        # the last failed: Helm replaces the deployed one below it
        (("deployed", "failed", "pending-upgrade"), 3, 3, 1),
        (("superseded", "failed", "pending-upgrade"), 3, 3, 2),  # none deployed: the last
        # a rollback runs the hooks rendered at the target's revision: the pending record is
        # the last one above it, and Helm replaces the last one below that
        (("superseded", "deployed", "pending-rollback"), 1, 3, 2),
        (("superseded", "superseded", "failed", "pending-rollback"), 1, 4, 3),
        (("", "deployed", "pending-rollback"), 1, 3, 2),  # the rendered revision pruned
    ],
)
def test_the_operation_and_the_record_it_replaces(
    statuses: tuple[str, ...], rendered: int, pending: int, current: int | None
) -> None:
    found = find_operation(rendered, records(*statuses).get)
    assert found is not None
    assert found.pending.revision == pending
    assert (found.current.revision if found.current else None) == current


def test_without_a_pending_record_helm_is_not_running_the_hook() -> None:
    assert find_operation(1, records().get) is None  # Argo CD: `helm template`, no record
    assert find_operation(1, records("deployed").get) is None


def test_an_upgrade_with_no_deployed_record_below_a_pending_one_is_not_guessed() -> None:
    with pytest.raises(LoadError, match="cannot tell what Helm would replace"):
        find_operation(2, records("pending-install", "pending-upgrade").get)


def keep(**annotations: str) -> Crd:
    body = crd()
    body["metadata"]["annotations"] = annotations
    return Crd(body)


NAME = crd()["metadata"]["name"]


@pytest.mark.parametrize(
    ("dropped", "refused"),
    [
        ({NAME: keep()}, True),  # live, no keep policy: Helm deletes it and its objects
        ({NAME: keep(**{"helm.sh/resource-policy": "keep"})}, False),  # Helm leaves it
        ({NAME: keep(**{"helm.sh/resource-policy": "delete"})}, True),
        ({NAME: None}, False),  # no longer live: nothing to delete
        ({}, False),  # this release applies it too
    ],
)
def test_helm_deletes_a_dropped_crd_unless_the_live_object_keeps_it(
    dropped: dict[str, Crd | None], refused: bool
) -> None:
    subject = HookSubject(
        replaced="release c-1.0.0 (revision 1)",
        dropped=dropped,
        stored={NAME: Stored(7, ("ns/a", "ns/b"))},
    )
    outcome = judge(hook_run.changes(subject), DEFAULT_POLICY)
    assert [f.code for f in outcome.findings] == (["UG608"] if refused else [])
    assert outcome.safe is not refused
    if refused:
        assert outcome.findings[0].crd == NAME
        assert "7 object(s) stored in it (ns/a, ns/b, ...)" in outcome.findings[0].message


@pytest.mark.parametrize("admission_policy", [True, False], ids=["policy", "no policy"])
def test_a_deletion_names_the_admission_policys_acceptance_where_the_release_applied_it(
    admission_policy: bool,
) -> None:
    subject = HookSubject(
        replaced="release c-1.0.0 (revision 1)",
        dropped={NAME: keep()},
        admission_policy=admission_policy,
    )
    [finding] = judge(hook_run.changes(subject), DEFAULT_POLICY).findings
    told = [n for n in finding.notes if n.startswith("admission policy: ")]
    command = f"`kubectl annotate crd {NAME} upgrade-guard.io/accept-delete=true --overwrite`"
    assert [command in n for n in told] == ([True] if admission_policy else [])


def test_a_first_adoption_is_reported_while_no_release_ran_the_guard() -> None:
    chart = {NAME: Crd(crd())}
    both = hook_run.both_sides(chart, chart)
    first = HookSubject(chart=chart, live=chart, both=both)
    codes = {p.rule.code for p in hook_run.changes(first).raw}
    assert "UG606" in codes
    again = HookSubject(chart=chart, live=chart, both=both, adopted=True)
    assert "UG606" not in {p.rule.code for p in hook_run.changes(again).raw}
