"""The operator's ClusterRoles and webhook configurations in the hook (issue 24 §3, §4),
against the real apiserver with the chart's RBAC only: an operator chart with the library,
rendered by the real helm (`helm template`, the whole stream given to `hook --crds`), its
objects applied as a release would have applied them, and the hook run as the library's
ServiceAccount (the ClusterRole the chart renders, nothing else). Each verdict beside the
nearest one that goes the other way; the library's grants held to least privilege by the
apiserver itself (`kubectl auth can-i`)."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_hook import STRING, UPGRADE_GUARD, HookRun, new_group, widget_crd

from testenv import GUARD_IMAGE, JSON, Cluster, Image, JobRunner, ToolRunner, objects_of

REPO = Path(__file__).resolve().parents[2]
LIBRARY = REPO / "chart-snippets" / "upgrade-guard"
CONTRACT = "upgrade-guard.io/admission-contract"
GUARD_VALUES = (
    "--set", f"upgrade-guard.image.repository={GUARD_IMAGE.split(':')[0]}",
    "--set", f"upgrade-guard.image.tag={GUARD_IMAGE.split(':')[1]}",
)  # fmt: skip
POLICY = {"counters": [{"name": "admission-contract", "rule": "monotonic"}]}
RBAC = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{{{ .Release.Name }}}}-operator
rules:
  - apiGroups: [{group}]
    resources: [widgets, widgets/status]
    verbs: [{verbs}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{{{ .Release.Name }}}}-leader-election
  namespace: {{{{ .Release.Namespace }}}}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update]
"""
WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{{{ .Release.Name }}}}-webhook
  annotations:
    {contract}: "{value}"
webhooks: []
"""


def operator_chart(root: Path, group: str, *, verbs: str = "get, list, watch",
                   contract: int = 1, policy: JSON | None = None,
                   rbac_templates: str = "rbac.yaml") -> Path:  # fmt: skip
    """An operator chart with the guard adopted: a CRD, a ClusterRole and a Role, a webhook
    configuration stamped with admission-contract, Chart.yaml naming their templates."""
    chart = root / f"chart-{secrets.token_hex(3)}"
    templates = chart / "templates"
    templates.mkdir(parents=True)
    shutil.copytree(LIBRARY, chart / "charts" / "upgrade-guard")
    annotations = {
        "upgrade-guard.io/controller-state-version": "1",
        "upgrade-guard.io/admission-contract": str(contract),
        "upgrade-guard.io/crds": f"widgets.{group}",
        "upgrade-guard.io/crd-templates": "crds.yaml",
        "upgrade-guard.io/rbac-templates": rbac_templates,
        "upgrade-guard.io/webhook-templates": "webhook.yaml",
    }
    metadata = {
        "apiVersion": "v2", "name": "operator", "version": "1.0.0",
        "dependencies": [{"name": "upgrade-guard", "version": "0.1.0",
                          "repository": "file://charts/upgrade-guard"}],
        "annotations": annotations,
    }  # fmt: skip
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata))
    (templates / "crds.yaml").write_text(yaml.safe_dump(widget_crd(group, {"a": STRING})))
    (templates / "rbac.yaml").write_text(RBAC.format(group=group, verbs=verbs))
    (templates / "webhook.yaml").write_text(WEBHOOK.format(contract=CONTRACT, value=contract))
    (templates / "guard.yaml").write_text(
        '{{ include "upgrade-guard.hook" (dict "root" . "controllerImage" "op:1.0.0") }}\n'
    )
    (chart / "upgrade-guard").mkdir()
    images = {"images": {"1.0.0": {"controller-state-version": 1}}}
    (chart / "upgrade-guard" / "images.yaml").write_text(yaml.safe_dump(images))
    (chart / "upgrade-guard" / "policy.yaml").write_text(yaml.safe_dump(policy or POLICY))
    return chart


class Release:
    """A chart rendered by helm as release ``name`` in a namespace: its stream, the library's
    hook objects, and the operator's own objects (what Helm would apply)."""

    def __init__(self, cluster: Cluster, chart: Path, name: str, namespace: str) -> None:
        done = subprocess.run(
            [str(cluster.binaries.helm), "template", name, str(chart), "-n", namespace],
            capture_output=True, text=True, env=cluster.env(), check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        self.chart = chart
        self.stream = chart / "rendered.yaml"
        self.stream.write_text(done.stdout)
        documents = [d for d in yaml.safe_load_all(done.stdout) if d]
        hooked = [d for d in documents if "helm.sh/hook" in d["metadata"].get("annotations", {})]
        hooks = objects_of(hooked)
        self.operator = [d for d in documents if d not in hooked]
        self.guard_rules = next(d for d in hooks if d["kind"] == "ClusterRole")["rules"]
        config = next(d for d in hooks if d["kind"] == "ConfigMap")["data"]
        self.live_objects = chart / "live-objects.txt"
        self.live_objects.write_text(config["live-objects.txt"])

    def apply(self, cluster: Cluster) -> None:
        """What Helm applies for the release: the operator's objects, as the admin."""
        manifest = self.chart / "applied.yaml"
        manifest.write_text(yaml.safe_dump_all(self.operator))
        done = subprocess.run(
            [str(cluster.binaries.kubectl), "apply", "--server-side", "-f", str(manifest)],
            capture_output=True, text=True, env=cluster.env(), check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def hook(self, kubeconfig: Path) -> HookRun:
        """The hook on the whole rendered stream, as the library's ServiceAccount."""
        done = subprocess.run(
            [UPGRADE_GUARD, "hook", "--crds", str(self.stream), "--kubeconfig", str(kubeconfig),
             "--live-objects", str(self.live_objects),
             "--policy", str(self.chart / "upgrade-guard" / "policy.yaml"),
             "--termination-log", str(self.chart / "termination-log")],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        return HookRun(done.returncode, done.stdout, done.stderr, "", 0.0)


@pytest.fixture
def installed(cluster: Cluster, namespace: str, tmp_path: Path) -> tuple[str, str]:
    """Release 1 applied (verbs get, list, watch; admission-contract 1): its name, group."""
    group, name = new_group(), f"r{secrets.token_hex(3)}"
    Release(cluster, operator_chart(tmp_path, group), name, namespace).apply(cluster)
    return name, group


def guard(cluster: Cluster, namespace: str, release: Release) -> Path:
    """The library's ServiceAccount: exactly the ClusterRole the chart renders for it."""
    return cluster.make_service_account(namespace, cluster_rules=release.guard_rules)


ROLE_CASES = [
    # (id, release 2's verbs, policy rules, exit, the UG401 line or None)
    ("verb removed: a warning", "get, list", {}, 0, "warning UG401"),
    ("verb removed, the policy makes it an error", "get, list", {"UG401": "error"}, 1,
     "error UG401"),
    ("verb added", "get, list, watch, patch", {"UG401": "error"}, 0, None),
    ("verbs into *", "'*'", {"UG401": "error"}, 0, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("verbs", "rules", "exit_code", "line"),
    [c[1:] for c in ROLE_CASES],
    ids=[c[0] for c in ROLE_CASES],
)
def test_the_release_clusterrole_against_the_live_one(
    cluster: Cluster, namespace: str, tmp_path: Path, installed: tuple[str, str],
    verbs: str, rules: JSON, exit_code: int, line: str | None,
) -> None:  # fmt: skip
    name, group = installed
    policy = {**POLICY, "rules": rules}
    chart = operator_chart(tmp_path, group, verbs=verbs, policy=policy)
    release = Release(cluster, chart, name, namespace)
    run = release.hook(guard(cluster, namespace, release))
    assert run.code == exit_code, run
    found = [entry for entry in run.stdout.splitlines() if "UG401" in entry]
    if line is None:
        assert not found, run
        return
    assert found[0].startswith(f"{line} role-permission-removed ClusterRole {name}-operator"), run
    assert f"watch widgets.{group}" in run.stdout, run


def test_a_live_clusterrole_pinned_with_more_is_reported(
    cluster: Cluster, namespace: str, tmp_path: Path, installed: tuple[str, str]
) -> None:
    """A GitOps repository pinned the role with `delete` too: the same chart again no longer
    grants it (the release has no record here, so only the live one is compared)."""
    name, group = installed
    path = f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}-operator"
    live = cluster.admin.get(path)
    live["rules"][0]["verbs"].append("delete")
    cluster.admin.replace(path, live)
    release = Release(cluster, operator_chart(tmp_path, group), name, namespace)
    run = release.hook(guard(cluster, namespace, release))
    assert run.code == 0, run
    removed = f"2 grant(s) of the live ClusterRole removed: delete widgets.{group}, delete"
    assert removed in run.stdout, run


WEBHOOK_CASES = [
    # (id, the live admission-contract, the chart's, exit)
    ("live contract above the chart's: a rollback below it", 3, 2, 1),
    ("live contract equal", 3, 3, 0),
    ("live contract below: an upgrade", 2, 3, 0),
]


@pytest.mark.parametrize(
    ("live", "ours", "exit_code"), [c[1:] for c in WEBHOOK_CASES], ids=[c[0] for c in WEBHOOK_CASES]
)
def test_a_live_admission_contract_above_the_chart_refuses(
    cluster: Cluster, namespace: str, tmp_path: Path, live: int, ours: int, exit_code: int
) -> None:
    group, name = new_group(), f"r{secrets.token_hex(3)}"
    newer = Release(cluster, operator_chart(tmp_path, group, contract=live), name, namespace)
    newer.apply(cluster)
    release = Release(cluster, operator_chart(tmp_path, group, contract=ours), name, namespace)
    run = release.hook(guard(cluster, namespace, release))
    assert run.code == exit_code, run
    refused = (
        f"error UG402 webhook-counter-below-live ValidatingWebhookConfiguration {name}-webhook"
    )
    assert (refused in run.stdout) == bool(exit_code), run
    if exit_code:
        assert f"admission-contract {live}, this release {ours}" in run.stdout, run


def can_i(cluster: Cluster, kubeconfig: Path, *args: str) -> bool:
    done = subprocess.run(
        [str(cluster.binaries.kubectl), "auth", "can-i", *args],
        capture_output=True, text=True, env=cluster.env(kubeconfig), check=False,
    )  # fmt: skip
    return done.stdout.strip() == "yes"


def test_the_library_grants_get_by_name_on_what_the_chart_renders_and_nothing_else(
    cluster: Cluster, namespace: str, tmp_path: Path, installed: tuple[str, str]
) -> None:
    name, group = installed
    release = Release(cluster, operator_chart(tmp_path, group), name, namespace)
    assert release.live_objects.read_text().splitlines() == [
        f"clusterroles/{name}-operator",
        f"validatingwebhookconfigurations/{name}-webhook",
    ]
    account = guard(cluster, namespace, release)
    webhooks = "validatingwebhookconfigurations.admissionregistration.k8s.io"
    roles = "clusterroles.rbac.authorization.k8s.io"
    allowed = [("get", f"{roles}/{name}-operator"), ("get", f"{webhooks}/{name}-webhook")]
    refused = [
        ("get", f"{roles}/cluster-admin"),
        ("list", roles),
        ("watch", f"{roles}/{name}-operator"),
        ("update", f"{roles}/{name}-operator"),
        ("get", f"{webhooks}/other"),
        ("list", webhooks),
        ("get", "mutatingwebhookconfigurations.admissionregistration.k8s.io/anything"),
        ("get", "roles.rbac.authorization.k8s.io"),
    ]
    assert all(can_i(cluster, account, verb, what) for verb, what in allowed)
    assert not any(can_i(cluster, account, verb, what) for verb, what in refused)
    run = release.hook(account)  # and that is all the hook needs
    assert run.code == 0, run


def test_a_clusterrole_whose_template_chart_yaml_does_not_name_is_bad_input(
    cluster: Cluster, namespace: str, tmp_path: Path, installed: tuple[str, str]
) -> None:
    name, group = installed
    chart = operator_chart(tmp_path, group, rbac_templates="")
    release = Release(cluster, chart, name, namespace)
    assert "clusterroles/" not in release.live_objects.read_text()
    run = release.hook(guard(cluster, namespace, release))
    assert run.code == 2, run
    assert f"ClusterRole {name}-operator" in run.stderr, run
    assert "upgrade-guard.io/rbac-templates" in run.stderr, run


def test_helm_upgrades_and_a_rollback_through_the_release_records(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    """Under Helm the hook Job reads this release's roles and webhook configurations from the
    pending release record and the replaced one: a verb removed between releases is refused
    when the policy makes UG401 an error, then passes once kept; a rollback below the
    admission contract the live webhook configuration carries is refused (UG402)."""
    group, name = new_group(), f"r{secrets.token_hex(3)}"
    guard_job = job_runner.expect(namespace, f"{name}-upgrade-guard")
    strict = {**POLICY, "rules": {"UG401": "error"}}

    def chart(**options: Any) -> str:
        return str(operator_chart(tmp_path, group, policy=strict, **options))

    install = helm("install", name, chart(), "-n", namespace, *GUARD_VALUES)
    assert install.returncode == 0, install.stderr
    assert guard_job.wait(1, timeout=90).succeeded

    narrower = helm("upgrade", name, chart(verbs="get, list"), "-n", namespace, *GUARD_VALUES)
    assert narrower.returncode != 0, narrower.stderr
    refused = guard_job.wait(2, timeout=90)
    assert not refused.succeeded
    removed = (
        f"error UG401 role-permission-removed ClusterRole {name}-operator: 2 grant(s) of"
        f" release operator-1.0.0 (revision 1) removed: watch widgets.{group}"
    )
    assert removed in refused.log, refused.log

    upgraded = helm("upgrade", name, chart(contract=2), "-n", namespace, *GUARD_VALUES)
    assert upgraded.returncode == 0, upgraded.stderr
    assert guard_job.wait(3, timeout=90).succeeded
    webhook = (
        f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}-webhook"
    )
    assert cluster.admin.get(webhook)["metadata"]["annotations"][CONTRACT] == "2"

    rollback = helm("rollback", name, "1", "-n", namespace)
    assert rollback.returncode != 0, rollback.stderr
    below = guard_job.wait(4, timeout=90)
    assert not below.succeeded
    assert below.log.startswith("upgrade-guard REFUSED: pre-rollback"), below.log
    assert (
        f"error UG402 webhook-counter-below-live ValidatingWebhookConfiguration {name}-webhook:"
        " the live configuration carries admission-contract 2, this release 1"
    ) in below.log, below.log
