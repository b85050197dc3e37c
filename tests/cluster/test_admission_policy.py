"""The library's ValidatingAdmissionPolicy with the real helm, apiserver and Job runner, on
the example chart: it stays with the release between operations and holds the counters of
the CRDs the chart lists on the paths no hook runs on (a rollback to a revision from before
the adoption, --no-hooks, uninstall, `kubectl apply --server-side`), unless the cluster admin
accepts exactly the change on the live CRD; a break-glass and uninstalling it on purpose work."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_chart_snippets import (
    CRD,
    CRDS,
    EXAMPLE,
    GUARD_VALUES,
    SNIPPETS,
    VAP_API,
    copy_release,
    fresh_install,
    helm_status,
    list_crds,
    schema_version,
    show,
    without_the_example_crd,
)

from testenv import Cluster, Image, JobRunner, ToolRunner, wait_for

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICIES = f"{ADMISSION}/validatingadmissionpolicies"
BINDINGS = f"{ADMISSION}/validatingadmissionpolicybindings"


def policy_name(namespace: str) -> str:
    return f"rel.{namespace}.upgrade-guard.io"


def denial(namespace: str) -> str:
    """How the apiserver introduces the policy's refusal (after kubectl's `The
    customresourcedefinitions "NAME" is invalid: : `, or Helm's `... is forbidden: `)."""
    name = policy_name(namespace)
    return (
        f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request:"
        f" upgrade-guard (release rel in namespace {namespace}): "
    )


@pytest.fixture(autouse=True)
def only_this_tests_policies(cluster: Cluster) -> None:
    """Every earlier test's release that listed the example's CRD left its policy: removed
    here (the break-glass, by label), so that what a test sees is its own release's."""
    for path in (BINDINGS, POLICIES):
        for item in cluster.admin.get(path, labelSelector="app.kubernetes.io/name=upgrade-guard")[
            "items"
        ]:
            cluster.admin.delete(f"{path}/{item['metadata']['name']}")


def policy_in_force(kubectl: ToolRunner, namespace: str) -> None:
    """The apiserver enforces a new binding after a moment (its policy informer): wait until
    a server-side dry run of a lowering annotation is refused."""

    def refused() -> bool:
        result = kubectl("annotate", "--dry-run=server", "--overwrite", "crd", "backups.example.io",
                         "upgrade-guard.io/controller-state-version=0")  # fmt: skip
        return policy_name(namespace) in result.stderr

    wait_for(refused, timeout=90, what="the admission policy enforced")


def store_backup(cluster: Cluster, namespace: str) -> str:
    backups = f"/apis/example.io/v1/namespaces/{namespace}/backups"
    cluster.admin.create(backups, {"apiVersion": "example.io/v1", "kind": "Backup",
                                   "metadata": {"name": "nightly"},
                                   "spec": {"schedule": "0 3 * * *",
                                            "target": "s3://b"}})  # fmt: skip
    return f"{backups}/nightly"


def annotations(cluster: Cluster, path: str = CRD) -> dict[str, str]:
    return dict(cluster.admin.get(path)["metadata"].get("annotations") or {})


def unguarded(release: str, to: Path) -> Path:
    """A copy of an example release from before the chart adopted the guard: no library, no
    include, its CRD without the upgrade-guard.io annotations."""
    chart = copy_release(release, to)
    shutil.rmtree(chart / "charts")
    shutil.rmtree(chart / "upgrade-guard")
    (chart / "templates" / "upgrade-guard.yaml").unlink()
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    del metadata["dependencies"], metadata["annotations"]
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))
    crd_file = chart / "templates" / "crds" / "backups.yaml"
    crd = yaml.safe_load(crd_file.read_text())
    del crd["metadata"]["annotations"]
    crd_file.write_text(yaml.safe_dump(crd, sort_keys=False))
    return chart


def test_the_policy_is_installed_with_the_chart_and_an_upgrade_raising_the_counters_passes(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, guard_image: Image,
) -> None:  # fmt: skip
    guard = fresh_install(cluster, namespace, job_runner, helm, "2.0.0")
    name = policy_name(namespace)
    policy = cluster.admin.get(f"{POLICIES}/{name}")
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [{
        "apiGroups": ["apiextensions.k8s.io"], "apiVersions": ["*"],
        "resources": ["customresourcedefinitions"], "operations": ["UPDATE", "DELETE"],
        "resourceNames": ["backups.example.io"], "scope": "*",
    }]  # fmt: skip
    assert policy["spec"]["failurePolicy"] == "Fail"
    binding = cluster.admin.get(f"{BINDINGS}/{name}")
    assert binding["spec"]["policyName"] == name
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert binding["metadata"]["annotations"]["meta.helm.sh/release-name"] == "rel"
    policy_in_force(kubectl, namespace)

    upgrade = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert upgrade.returncode == 0, show(upgrade)
    assert guard.wait(2, timeout=60).succeeded
    assert schema_version(cluster) == "3"

    # It never matches a CRD the chart does not list: one with the same annotations is
    # lowered and deleted freely.
    other = yaml.safe_load((EXAMPLE / "3.0.0" / "templates" / "crds" / "backups.yaml").read_text())
    group = f"{namespace}.example.io"
    other["metadata"]["name"] = f"backups.{group}"
    other["spec"]["group"] = group
    cluster.admin.create(CRDS, other)
    lowered = {"metadata": {"annotations": {"upgrade-guard.io/crd-schema-version": "1"}}}
    cluster.admin.patch(f"{CRDS}/backups.{group}", lowered)
    cluster.admin.delete(f"{CRDS}/backups.{group}")
    # Nor any object that is not a CRD: the release's own Deployment is edited freely.
    cluster.admin.patch(f"/apis/apps/v1/namespaces/{namespace}/deployments/rel-controller",
                        {"metadata": {"annotations": {"x": "y"}}})  # fmt: skip


def test_a_rollback_to_a_revision_from_before_the_adoption_is_refused_by_the_apiserver(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    """Helm runs the hooks of the revision it restores: revision 1 has none, so only the
    policy, which revision 2 installed, stands between the rollback and the CRD."""
    without_the_example_crd(cluster)
    before = unguarded("1.0.0", tmp_path / "before")
    install = helm("install", "rel", str(before), "-n", namespace)
    assert install.returncode == 0, show(install)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    adopt = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert adopt.returncode == 0, show(adopt)
    assert guard.wait(1, timeout=60).succeeded
    assert schema_version(cluster) == "3"
    backup = store_backup(cluster, namespace)
    policy_in_force(kubectl, namespace)
    deployment = f"/apis/apps/v1/namespaces/{namespace}/deployments/rel-controller"

    rollback = helm("rollback", "rel", "1", "-n", namespace)
    print(show(rollback))
    assert rollback.returncode != 0, show(rollback)
    assert (
        denial(namespace)
        + "this UPDATE of the CRD backups.example.io drops its upgrade-guard.io schema"
        " annotations (crd-schema-version 3 -> none" in rollback.stderr
    ), show(rollback)
    assert (
        "To make exactly this change on purpose: kubectl annotate crd backups.example.io"
        " upgrade-guard.io/accept-schema-digest=none --overwrite, then run it again"
    ) in rollback.stderr, show(rollback)
    # What stayed: the CRD at schema 3 with its Backup, the policy; the release is failed.
    assert annotations(cluster)["upgrade-guard.io/crd-schema-version"] == "3"
    assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"
    assert cluster.admin.get_or_none(f"{POLICIES}/{policy_name(namespace)}") is not None
    assert helm_status(helm, namespace) == "failed"
    history = json.loads(helm("history", "rel", "-n", namespace, "-o", "json").stdout)
    assert [(r["revision"], r["status"], r["chart"]) for r in history] == [
        (1, "superseded", "example-operator-1.0.0"),
        (2, "superseded", "example-operator-3.0.0"),
        (3, "failed", "example-operator-1.0.0"),
    ]
    # The objects after the CRD in Helm's order are applied all the same: the controller
    # Deployment runs 1.0.0's image over state version 2. The policy holds CRDs only; the
    # hook, which this revision does not have, is what pairs an image with the stored state.
    image = cluster.admin.get(deployment)["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "example.com/backup-operator:1.0.0"


def refused_delete(namespace: str) -> str:
    return denial(namespace) + (
        "deleting the CRD backups.example.io deletes every object stored in it"
        " (crd-schema-version 3, controller-state-version 2). To delete it on purpose: kubectl"
        " annotate crd backups.example.io upgrade-guard.io/accept-delete=true, then delete it again"
    )


def test_an_upgrade_with_no_hooks_dropping_the_crd_leaves_it_and_its_objects(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    backup = store_backup(cluster, namespace)
    policy_in_force(kubectl, namespace)
    dropped = copy_release("3.0.0", tmp_path / "3.1.0")
    (dropped / "templates" / "crds" / "backups.yaml").unlink()
    metadata = yaml.safe_load((dropped / "Chart.yaml").read_text())
    metadata["version"] = "3.1.0"
    metadata["annotations"]["upgrade-guard.io/crd-templates"] = "none"
    (dropped / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))

    no_hooks = helm("upgrade", "rel", str(dropped), "-n", namespace, "--no-hooks", *GUARD_VALUES)
    print(show(no_hooks))
    assert no_hooks.returncode != 0
    assert (
        "\nError: UPGRADE FAILED: failed to delete resource backups.example.io:"
        ' customresourcedefinitions.apiextensions.k8s.io "backups.example.io" is forbidden: '
        + refused_delete(namespace)
        in no_hooks.stderr
    ), show(no_hooks)
    # What stayed: the CRD and its Backup, the policy (3.1.0 renders it too); the release
    # is failed at 3.1.0.
    assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"
    assert schema_version(cluster) == "3"
    assert cluster.admin.get_or_none(f"{POLICIES}/{policy_name(namespace)}") is not None
    assert helm_status(helm, namespace) == "failed"


def test_uninstall_leaves_the_crd_and_its_objects_and_says_how_to_delete_them(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, shell: ToolRunner, guard_image: Image,
) -> None:  # fmt: skip
    fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    backup = store_backup(cluster, namespace)
    policy_in_force(kubectl, namespace)
    name = policy_name(namespace)

    # Helm 4 prints only that it failed; --debug shows the apiserver's refusal.
    uninstall = helm("uninstall", "rel", "-n", namespace)
    assert uninstall.returncode != 0, show(uninstall)
    assert uninstall.stderr == "Error: failed to delete release: rel\n", show(uninstall)
    debug = helm("uninstall", "rel", "-n", namespace, "--debug")
    print(show(debug))
    assert debug.returncode != 0, show(debug)
    assert refused_delete(namespace) in debug.stderr, show(debug)
    # What stayed: the CRD and its Backup, the policy (kept), the release "uninstalling"
    # with the CRD alone; every other object of the release is deleted.
    assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"
    assert schema_version(cluster) == "3"
    assert cluster.admin.get_or_none(f"{POLICIES}/{name}") is not None
    assert cluster.admin.get_or_none(f"{BINDINGS}/{name}") is not None
    assert helm_status(helm, namespace) == "uninstalling"
    deployment = f"/apis/apps/v1/namespaces/{namespace}/deployments/rel-controller"
    assert cluster.admin.get_or_none(deployment) is None

    # Deleting it on purpose, as the refusal says: the uninstall then completes.
    accept = shell("kubectl annotate crd backups.example.io upgrade-guard.io/accept-delete=true")
    assert accept.returncode == 0, show(accept)
    done = helm("uninstall", "rel", "-n", namespace)
    assert done.returncode == 0, show(done)
    wait_for(lambda: cluster.admin.get_or_none(CRD) is None, timeout=60, what="CRD deleted")
    # The policy outlives the release until deleted on purpose (docs/hook.md).
    assert cluster.admin.get_or_none(f"{POLICIES}/{name}") is not None
    removed = shell(
        f"kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy {name}"
    )
    assert removed.returncode == 0, show(removed)


def test_kubectl_apply_of_an_older_crd_is_refused_and_the_acceptance_lets_exactly_it_through(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, shell: ToolRunner, guard_image: Image,
) -> None:  # fmt: skip
    fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    policy_in_force(kubectl, namespace)

    def apply(release: str) -> subprocess.CompletedProcess[str]:
        crd_file = EXAMPLE / release / "templates" / "crds" / "backups.yaml"
        return kubectl("apply", "--server-side", "--force-conflicts", "-f", str(crd_file))

    digest = annotations(cluster)["upgrade-guard.io/crd-schema-digest"]
    two = yaml.safe_load((EXAMPLE / "2.0.0" / "templates" / "crds" / "backups.yaml").read_text())
    two_digest = two["metadata"]["annotations"]["upgrade-guard.io/crd-schema-digest"]
    refused = apply("2.0.0")
    print(show(refused))
    assert refused.returncode != 0
    accept = (f"kubectl annotate crd backups.example.io upgrade-guard.io/accept-schema-digest="
              f"{two_digest} --overwrite")  # fmt: skip
    kubectls = 'The customresourcedefinitions "backups.example.io" is invalid: : '
    assert refused.stderr.strip() == kubectls + denial(namespace) + (
        "this UPDATE of the CRD backups.example.io lowers its schema (crd-schema-version 3 -> 2,"
        f" crd-schema-digest {digest} -> {two_digest}, controller-state-version 2 -> 2): objects"
        " stored under the newer schema may no longer be read, written or validated. To make"
        f" exactly this change on purpose: {accept}, then run it again"
    ), show(refused)
    assert schema_version(cluster) == "3"

    accepted = shell(accept)
    assert accepted.returncode == 0, show(accepted)
    # Exactly that change: 1.0.0's schema (and its lower controller-state-version) still not.
    other = apply("1.0.0")
    assert other.returncode != 0 and "lowers its schema (crd-schema-version 3 -> 1" in other.stderr
    assert schema_version(cluster) == "3"
    passed = apply("2.0.0")
    assert passed.returncode == 0, show(passed)
    assert schema_version(cluster) == "2"


def test_a_break_glass_and_uninstalling_the_policy_on_purpose(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, shell: ToolRunner, guard_image: Image,
) -> None:  # fmt: skip
    guard = fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    policy_in_force(kubectl, namespace)
    name = policy_name(namespace)
    older = ("annotate", "--dry-run=server", "--overwrite", "crd", "backups.example.io",
             "upgrade-guard.io/crd-schema-version=1")  # fmt: skip
    assert name in kubectl(*older).stderr

    # Break-glass, as docs/hook.md says: the binding deleted; the next upgrade brings it back.
    broken = shell(f"kubectl delete validatingadmissionpolicybinding {name}")
    assert broken.returncode == 0, show(broken)
    wait_for(lambda: kubectl(*older).returncode == 0, timeout=30, what="the binding gone")
    again = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert again.returncode == 0, show(again)
    assert guard.wait(2, timeout=60).succeeded
    assert cluster.admin.get_or_none(f"{BINDINGS}/{name}") is not None
    policy_in_force(kubectl, namespace)

    # Uninstalling it on purpose, as docs/hook.md says: the release stops rendering it, and
    # the objects Helm keeps are deleted; the hook stays.
    off = shell(f"helm upgrade rel {EXAMPLE / '3.0.0'} -n {namespace} --reuse-values"
                " --set upgrade-guard.admissionPolicy=false &&"
                " kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy"
                f" {name}")  # fmt: skip
    assert off.returncode == 0, show(off)
    assert guard.wait(3, timeout=60).succeeded
    assert cluster.admin.get_or_none(f"{POLICIES}/{name}") is None
    assert cluster.admin.get_or_none(f"{BINDINGS}/{name}") is None
    wait_for(lambda: kubectl(*older).returncode == 0, timeout=30, what="the policy gone")
    again = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, "--reuse-values")
    assert again.returncode == 0, show(again)
    assert guard.wait(4, timeout=60).succeeded
    assert cluster.admin.get_or_none(f"{POLICIES}/{name}") is None


def test_a_newer_policy_replaces_the_older_in_place_and_a_chart_that_stops_adopting_passes(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    library = tmp_path / "library-0.0.9"
    shutil.copytree(SNIPPETS / "upgrade-guard", library)
    template = library / "templates" / "_hook.tpl"
    template.write_text(template.read_text().replace("'upgrade-guard (", "'upgrade-guard 0.0.9 ("))
    older = copy_release("2.0.0", tmp_path / "2.0.0")
    (older / "charts" / "upgrade-guard").unlink()
    (older / "charts" / "upgrade-guard").symlink_to(library)
    without_the_example_crd(cluster)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    install = helm("install", "rel", str(older), "-n", namespace, *GUARD_VALUES)
    assert install.returncode == 0, show(install)
    assert guard.wait(1, timeout=60).succeeded
    name = policy_name(namespace)
    first: Any = cluster.admin.get(f"{POLICIES}/{name}")
    policy_in_force(kubectl, namespace)
    lower = ("annotate", "--dry-run=server", "--overwrite", "crd", "backups.example.io",
             "upgrade-guard.io/crd-schema-version=1")  # fmt: skip
    assert "upgrade-guard 0.0.9 (release rel" in kubectl(*lower).stderr

    upgrade = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert upgrade.returncode == 0, show(upgrade)
    assert guard.wait(2, timeout=60).succeeded
    second = cluster.admin.get(f"{POLICIES}/{name}")
    # The same object updated (never deleted and created: no moment where none holds).
    assert second["metadata"]["uid"] == first["metadata"]["uid"]
    assert second["metadata"]["generation"] > first["metadata"]["generation"]
    newer = f"upgrade-guard (release rel in namespace {namespace}): "
    wait_for(lambda: newer in kubectl(*lower).stderr, timeout=30, what="the newer policy enforced")

    # A chart that stops adopting the guard, its CRD still stamped as 3.0.0's: the upgrade
    # passes and takes the policy with it.
    stopped = copy_release("3.0.0", tmp_path / "3.1.0")
    (stopped / "templates" / "upgrade-guard.yaml").unlink()
    shutil.rmtree(stopped / "charts")
    metadata = yaml.safe_load((stopped / "Chart.yaml").read_text())
    del metadata["dependencies"]
    metadata["version"] = "3.1.0"
    (stopped / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))
    leaving = helm("upgrade", "rel", str(stopped), "-n", namespace)
    assert leaving.returncode == 0, show(leaving)
    assert helm_status(helm, namespace) == "deployed"
    assert schema_version(cluster) == "3"
    # Helm keeps the policy: a later release of the chart whose CRD drops the stamps meets
    # it, and deleting it is the documented command.
    assert cluster.admin.get_or_none(f"{POLICIES}/{name}") is not None
    unstamped = unguarded("3.0.0", tmp_path / "3.2.0")
    refused = helm("upgrade", "rel", str(unstamped), "-n", namespace)
    assert refused.returncode != 0 and "drops its upgrade-guard.io schema annotations" in (
        refused.stderr
    ), show(refused)
    removed = kubectl("delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", name)
    assert removed.returncode == 0, show(removed)
    wait_for(lambda: kubectl(*lower).returncode == 0, timeout=30, what="the policy gone")
    passed = helm("upgrade", "rel", str(unstamped), "-n", namespace)
    assert passed.returncode == 0, show(passed)
    assert "upgrade-guard.io/crd-schema-version" not in annotations(cluster)


TWO = str(EXAMPLE / "2.0.0" / "templates" / "crds" / "backups.yaml")


@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        pytest.param(("replace", "-f", TWO), "lowers its schema (crd-schema-version 3 -> 2,",
                     id="Flux CreateReplace: a PUT of crds/"),
        pytest.param(("delete", "--cascade=foreground", "crd", "backups.example.io"),
                     "deleting the CRD backups.example.io deletes every object stored in it",
                     id="Argo CD prune: a DELETE"),
    ],
)  # fmt: skip
def test_the_requests_gitops_tools_send_are_refused_alike(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, guard_image: Image, command: tuple[str, ...], refusal: str,
) -> None:  # fmt: skip
    """Not Flux or Argo CD themselves: the request each sends (helm-controller replaces a
    chart's crds/ before the upgrade, its hooks; gitops-engine prunes with a DELETE), which
    the policy judges by operation, whichever client sends it."""
    fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    backup = store_backup(cluster, namespace)
    policy_in_force(kubectl, namespace)
    refused = kubectl(*command)
    assert refused.returncode != 0, show(refused)
    assert denial(namespace) in refused.stderr and refusal in refused.stderr, show(refused)
    assert schema_version(cluster) == "3"
    assert cluster.admin.get(backup)["metadata"]["name"] == "nightly"


def test_the_controller_state_acceptance_lets_exactly_that_version_through(
    cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
    kubectl: ToolRunner, shell: ToolRunner, guard_image: Image,
) -> None:  # fmt: skip
    fresh_install(cluster, namespace, job_runner, helm, "3.0.0")
    policy_in_force(kubectl, namespace)

    def state(value: str) -> subprocess.CompletedProcess[str]:
        return kubectl("annotate", "--overwrite", "crd", "backups.example.io",
                       f"upgrade-guard.io/controller-state-version={value}")  # fmt: skip

    refused = state("1")
    assert refused.returncode != 0, show(refused)
    assert (
        "lowers its controller-state-version (crd-schema-version 3 -> 3, crd-schema-digest"
    ) in refused.stderr, show(refused)
    accept = ("kubectl annotate crd backups.example.io"
              " upgrade-guard.io/accept-controller-state-version=1 --overwrite")  # fmt: skip
    assert f"To make exactly this change on purpose: {accept}, then run it again" in (
        refused.stderr
    ), show(refused)
    assert shell(accept).returncode == 0
    assert state("0").returncode != 0
    passed = state("1")
    assert passed.returncode == 0, show(passed)
    assert annotations(cluster)["upgrade-guard.io/controller-state-version"] == "1"


def rendered_kinds(helm: ToolRunner, chart: Path, *flags: str) -> dict[str, Any]:
    rendered = helm("template", "rel", str(chart), "-n", "ns", *flags)
    assert rendered.returncode == 0, show(rendered)
    return {d["kind"]: d for d in yaml.safe_load_all(rendered.stdout) if d}


def test_rendered_only_where_the_cluster_serves_it_naming_the_listed_crds(
    helm: ToolRunner, tmp_path: Path
) -> None:
    chart = copy_release("3.0.0", tmp_path / "3.0.0")
    list_crds(chart, ["backups.example.io", "restores.example.io"])
    served = ("--api-versions", VAP_API)
    assert "ValidatingAdmissionPolicy" not in rendered_kinds(helm, chart)
    off = ("--set", "upgrade-guard.admissionPolicy=false")
    assert "ValidatingAdmissionPolicy" not in rendered_kinds(helm, chart, *served, *off)
    kinds = rendered_kinds(helm, chart, *served)
    policy, binding = kinds["ValidatingAdmissionPolicy"], kinds["ValidatingAdmissionPolicyBinding"]
    assert policy["metadata"]["name"] == binding["metadata"]["name"] == "rel.ns.upgrade-guard.io"
    [rule] = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule["resourceNames"] == ["backups.example.io", "restores.example.io"]
    assert rule["operations"] == ["UPDATE", "DELETE"]
    for kept in (policy, binding):
        assert kept["metadata"]["annotations"] == {
            "helm.sh/resource-policy": "keep",
            "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
        }
        assert "helm.sh/hook" not in kept["metadata"]["annotations"]
