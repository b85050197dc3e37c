"""The library chart end to end: the example operator chart at three releases, installed,
upgraded and rolled back with the real helm against the real apiserver, its guard Job run
from the real image (tools/image/build.sh) under the chart's own security context."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from ways_out import printed, typed

from testenv import (
    GUARD_IMAGE,
    JSON,
    Cluster,
    Image,
    JobHandle,
    JobRunner,
    KubeError,
    ToolRunner,
    objects_of,
    wait_for,
)
from upgrade_guard.write.bundle import BUNDLE_LIMIT

REPO = Path(__file__).resolve().parents[2]
SNIPPETS = REPO / "chart-snippets"
EXAMPLE = SNIPPETS / "example"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD = f"{CRDS}/backups.example.io"
GUARD_VALUES = (
    "--set", f"upgrade-guard.image.repository={GUARD_IMAGE.split(':')[0]}",
    "--set", f"upgrade-guard.image.tag={GUARD_IMAGE.split(':')[1]}",
)  # fmt: skip
NO_POLICY = ("--set", "upgrade-guard.files.policy=")
# What a cluster serving ValidatingAdmissionPolicy tells Helm (`helm template` offline does not).
VAP_API = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"


def show(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def schema_version(cluster: Cluster) -> str:
    crd = cluster.admin.get(CRD)
    return str(crd["metadata"]["annotations"]["upgrade-guard.io/crd-schema-version"])


def copy_release(release: str, to: Path) -> Path:
    """A copy of an example release to edit, its charts/upgrade-guard still the library."""
    shutil.copytree(EXAMPLE / release, to, symlinks=True)
    (to / "charts" / "upgrade-guard").unlink()
    (to / "charts" / "upgrade-guard").symlink_to(SNIPPETS / "upgrade-guard")
    return to


def delete_crd_on_purpose(cluster: Cluster, path: str) -> None:
    """A CRD deleted as docs/hook.md says to on purpose: the acceptance annotation first,
    which the admission policy of every release that lists it asks for."""
    if cluster.admin.get_or_none(path) is None:
        return
    accept = {"metadata": {"annotations": {"upgrade-guard.io/accept-delete": "true"}}}
    cluster.admin.patch(path, accept)
    cluster.admin.delete(path)
    wait_for(lambda: cluster.admin.get_or_none(path) is None, timeout=60, what=f"{path} deleted")


def without_the_example_crd(cluster: Cluster) -> None:
    """The example's CRD deleted: cluster-wide, so another test's release may own it."""
    delete_crd_on_purpose(cluster, CRD)


def fresh_install(cluster: Cluster, namespace: str, job_runner: JobRunner, helm: ToolRunner,
                  release: str) -> JobHandle:  # fmt: skip
    """The example release installed as `rel`, its guard passing, on a cluster without the
    example's CRD; the guard's Job."""
    without_the_example_crd(cluster)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    install = helm("install", "rel", str(EXAMPLE / release), "-n", namespace, *GUARD_VALUES)
    assert install.returncode == 0, show(install)
    assert guard.wait(1, timeout=60).succeeded
    return guard


def helm_status(helm: ToolRunner, namespace: str) -> str:
    result = helm("status", "rel", "-n", namespace, "-o", "json")
    return str(json.loads(result.stdout)["info"]["status"])


@pytest.mark.parametrize("chart", ["upgrade-guard", "example/1.0.0", "example/2.0.0",
                                   "example/3.0.0", "example/4.0.0"])  # fmt: skip
def test_helm_lint_is_clean(helm: ToolRunner, chart: str) -> None:
    result = helm("lint", "--strict", str(SNIPPETS / chart))
    assert result.returncode == 0, show(result)


def cluster_role_rules(helm: ToolRunner, chart: Path, *values: str) -> list[JSON]:
    rendered = helm("template", "rel", str(chart), "--show-only", "templates/upgrade-guard.yaml",
                    *values)  # fmt: skip
    assert rendered.returncode == 0, show(rendered)
    documents = objects_of(yaml.safe_load_all(rendered.stdout))
    role = next(d for d in documents if d["kind"] == "ClusterRole")
    return list(role["rules"])


def list_crds(chart: Path, names: list[str]) -> None:
    """Chart.yaml's upgrade-guard.io/crds: the CRDs the hook may read."""
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    metadata["annotations"]["upgrade-guard.io/crds"] = ",".join(names)
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata))


@pytest.mark.parametrize(
    ("crd_names", "stored_state", "listed"),
    [
        pytest.param(["backups.example.io"], ["backups.example.io"], {"example.io": ["backups"]},
                     id="the example: CRD and stored-state resource are one"),
        pytest.param(["backups.example.io"], [], {"example.io": ["backups"]},
                     id="no stored-state: the CRD's objects still"),
        pytest.param(["backups.example.io", "alertmanagers.monitoring.coreos.com",
                      "restores.example.io"], ["configmaps"],
                     {"": ["configmaps"], "example.io": ["backups", "restores"],
                      "monitoring.coreos.com": ["alertmanagers"]},
                     id="several groups and a core resource"),
    ],
)  # fmt: skip
def test_the_cluster_role_gets_the_crds_and_lists_their_objects_only(
    helm: ToolRunner, tmp_path: Path, crd_names: list[str], stored_state: list[str],
    listed: dict[str, list[str]],
) -> None:  # fmt: skip
    """Least privilege: `get` on the chart's CRDs by name; `list` (no `get`, no `watch`) on
    their resources, for evidence, and on the policy's stored-state resources."""
    chart = tmp_path / "chart"
    shutil.copytree(EXAMPLE / "1.0.0", chart)  # follows charts/upgrade-guard's symlink
    policy = {"stored-state": [{"resource": r, "path": "status.v"} for r in stored_state]}
    (chart / "upgrade-guard" / "policy.yaml").write_text(yaml.safe_dump(policy))
    list_crds(chart, crd_names)
    rules = cluster_role_rules(helm, chart)
    assert rules == [
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
         "verbs": ["get"], "resourceNames": sorted(crd_names)},
        *({"apiGroups": [group], "resources": resources, "verbs": ["list"]}
          for group, resources in listed.items()),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("crd_name", "allowed"),
    [("backups.example.io", True), ("backups.example", False), ("secrets", False)],
)
def test_crd_names_are_plural_dot_group_as_the_apiserver_requires(
    cluster: Cluster, helm: ToolRunner, tmp_path: Path, crd_name: str, allowed: bool
) -> None:
    """The listed CRDs become `list` rules: a name the apiserver would not give a CRD
    (`secrets`) must not render one."""
    plural, _, group = crd_name.partition(".")
    crd = yaml.safe_load((EXAMPLE / "1.0.0" / "templates" / "crds" / "backups.yaml").read_text())
    crd["metadata"] = {"name": crd_name}
    crd["spec"]["group"] = group
    crd["spec"]["names"].update(plural=plural, singular=plural.removesuffix("s"))
    try:
        cluster.admin.create(CRDS, crd, dryRun="All")
        served = True
    except KubeError as error:
        served = error.code == 409  # valid, and already there (the e2e test's)
    chart = tmp_path / "chart"
    shutil.copytree(EXAMPLE / "1.0.0", chart)  # follows charts/upgrade-guard's symlink
    list_crds(chart, ["backups.example.io", crd_name])
    rendered = helm("template", "rel", str(chart))
    assert (served, rendered.returncode == 0) == (allowed, allowed), show(rendered)
    if not allowed:
        assert f'lists "{crd_name}", not PLURAL.GROUP' in rendered.stderr, show(rendered)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param({"upgrade-guard.io/controller-state-version": None},
                     "Chart.yaml declares no controller-state version: add the annotation"
                     ' upgrade-guard.io/controller-state-version: "N"', id="no counter"),
        pytest.param({"upgrade-guard.io/crds": "restores.example.io"},
                     "templates/crds/backups.yaml renders the CRD backups.example.io, which"
                     " Chart.yaml's upgrade-guard.io/crds does not list", id="CRD not listed"),
        pytest.param({"upgrade-guard.io/crds": None}, "Chart.yaml lists no CRDs",
                     id="no CRDs listed"),
    ],
)  # fmt: skip
def test_the_render_fails_with_the_fix_when_chart_yaml_leaves_a_check_off(
    helm: ToolRunner, tmp_path: Path, edit: dict[str, str | None], message: str
) -> None:
    """Pairing is never silently off: the counters and CRD names are the chart's own
    (Chart.yaml annotations), and a chart that leaves them out does not render."""
    chart = tmp_path / "chart"
    shutil.copytree(EXAMPLE / "1.0.0", chart)  # follows charts/upgrade-guard's symlink
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    for key, value in edit.items():
        metadata["annotations"].pop(key)
        if value is not None:
            metadata["annotations"][key] = value
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata))
    rendered = helm("template", "rel", str(chart))
    assert rendered.returncode != 0 and message in rendered.stderr, show(rendered)


def guard_inputs(
    helm: ToolRunner, chart: Path, values: tuple[str, ...], message: str | None
) -> JSON | None:
    """The data of the guard's ConfigMap as CHART renders with VALUES; None when the render
    fails, as it must, with MESSAGE, when MESSAGE is given."""
    result = helm("template", "rel", str(chart), "--show-only", "templates/upgrade-guard.yaml",
                  *values)  # fmt: skip
    if message is not None:
        assert result.returncode != 0 and message in result.stderr, show(result)
        return None
    assert result.returncode == 0, show(result)
    objects = objects_of(yaml.safe_load_all(result.stdout))
    config = next(d for d in objects if d["kind"] == "ConfigMap")
    return dict(config["data"])


SWITCHED = "{{- if .Values.installCRDs }}\n%s{{- end }}\n"  # a CRD switch (cert-manager's older)
NO_TEMPLATES = (
    "Chart.yaml names no CRD templates: add the annotation upgrade-guard.io/crd-templates"
)


@pytest.mark.parametrize(
    ("crd_templates", "switch", "rendered", "message"),
    [
        pytest.param("crds/backups.yaml", None, "backups.example.io", None, id="the example"),
        pytest.param(None, None, None, NO_TEMPLATES, id="annotation missing"),
        pytest.param(" , ", None, None, NO_TEMPLATES, id="annotation empty"),
        pytest.param("none", None, "", None, id="none on purpose"),
        pytest.param("backups.yaml", None, None, "Chart.yaml's upgrade-guard.io/crd-templates"
                     " names backups.yaml, but example-operator has no template"
                     " templates/backups.yaml", id="no such template"),
        pytest.param("crds/backups.yaml", "true", "backups.example.io", None, id="switched on"),
        pytest.param("crds/backups.yaml", "false", "", None, id="switched off"),
        pytest.param("crds/backups.yaml,deployment.yaml", "true", None, "templates/deployment.yaml,"
                     " which Chart.yaml's upgrade-guard.io/crd-templates names, renders"
                     " Deployment and no CRD", id="a template of other kinds"),
        pytest.param("_helpers.tpl", None, None, "Chart.yaml's upgrade-guard.io/crd-templates"
                     " names templates/_helpers.tpl, a partial", id="a partial"),
    ],
)  # fmt: skip
def test_the_crd_templates_render_the_crds_or_say_none(
    helm: ToolRunner, tmp_path: Path, crd_templates: str | None, switch: str | None,
    rendered: str | None, message: str | None,
) -> None:  # fmt: skip
    """Without a release record (Argo CD) the hook judges the CRDs the named templates
    render: a chart that names none, or a template that is not there or renders other
    kinds, fails to render with the fix. A template that renders nothing is a value
    switching the CRDs off (the hook judges none, as asked); `none` says a release applies
    no CRD on purpose. `rendered`: the library's rendered-crds.txt."""
    chart = tmp_path / "chart"
    shutil.copytree(EXAMPLE / "1.0.0", chart)  # follows charts/upgrade-guard's symlink
    values: tuple[str, ...] = ()
    if switch is not None:
        crd = chart / "templates" / "crds" / "backups.yaml"
        crd.write_text(SWITCHED % crd.read_text())
        values = ("--set", f"installCRDs={switch}")
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    metadata["annotations"].pop("upgrade-guard.io/crd-templates")
    if crd_templates is not None:
        metadata["annotations"]["upgrade-guard.io/crd-templates"] = crd_templates
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata))
    data = guard_inputs(helm, chart, values, message)
    if data is not None:
        assert data["rendered-crds.txt"] == rendered
        assert data["crds.txt"] == "backups.example.io"


def test_the_docs_show_the_rbac_the_example_chart_renders(helm: ToolRunner) -> None:
    section = (REPO / "docs/hook.md").read_text().split("## What the hook needs (RBAC)\n", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    rendered = cluster_role_rules(helm, EXAMPLE / "1.0.0")
    assert yaml.safe_load(block)["rules"] == rendered
    assert cluster_role_rules(helm, EXAMPLE / "1.0.0", *NO_POLICY) == rendered


def hook_args(helm: ToolRunner, chart: Path, *values: str) -> list[str]:
    rendered = helm("template", "rel", str(chart), "--show-only", "templates/upgrade-guard.yaml",
                    *values)  # fmt: skip
    assert rendered.returncode == 0, show(rendered)
    job = next(d for d in yaml.safe_load_all(rendered.stdout) if d and d["kind"] == "Job")
    return list(job["spec"]["template"]["spec"]["containers"][0]["args"])


def test_several_controller_images_each_reach_the_hook_under_their_slot(
    helm: ToolRunner, tmp_path: Path
) -> None:
    """controllerImages passes every image, each as SLOT=IMAGE; controllerImage alone is the
    slot `image` (the example chart's include, unchanged)."""
    single = hook_args(helm, EXAMPLE / "3.0.0")
    assert "--controller-image=image=example.com/backup-operator:3.0.0" in single
    chart = copy_release("3.0.0", tmp_path / "several")
    (chart / "templates" / "upgrade-guard.yaml").write_text(
        '{{ include "upgrade-guard.hook" (dict "root" . "controllerImages" (dict\n'
        '     "image" (include "example-operator.image" .)\n'
        '     "webhook.image" (printf "example.com/webhook:%s" .Values.webhookTag))) }}\n'
    )
    args = hook_args(helm, chart, "--set", "webhookTag=2.0.0")
    images = [a for a in args if a.startswith("--controller-image=")]
    assert images == [
        "--controller-image=image=example.com/backup-operator:3.0.0",
        "--controller-image=webhook.image=example.com/webhook:2.0.0",
    ]


def test_acceptances_reach_the_hook_with_the_chart_version(helm: ToolRunner) -> None:
    entry = '{"chart":"3.0.0","code":"UG202","crd":"backups.example.io","path":"spec.target"}'
    args = hook_args(helm, EXAMPLE / "3.0.0", "--set-json", f"upgrade-guard.accept=[{entry}]")
    assert "--chart-version=3.0.0" in args
    assert [a for a in args if a.startswith("--accept=")] == [f"--accept={entry}"]
    extra = '{"chart":"3.0.0","code":"UG202","crd":"b.example.io","reason":"x"}'
    refused = helm("template", "rel", str(EXAMPLE / "3.0.0"),
                   "--set-json", f"upgrade-guard.accept=[{extra}]")  # fmt: skip
    assert refused.returncode != 0 and "reason" in refused.stderr, show(refused)


def test_install_upgrade_reuse_values_unsafe_upgrade_and_rollback(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    shell: ToolRunner,
    guard_image: Image,
) -> None:
    without_the_example_crd(cluster)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")

    def chart(release: str) -> str:
        return str(EXAMPLE / release)

    # Release 1 installs: the guard passes (nothing live yet), then the CRD is applied.
    install = helm("install", "rel", chart("1.0.0"), "-n", namespace, *GUARD_VALUES)
    assert install.returncode == 0, show(install)
    first = guard.wait(1, timeout=60)
    assert first.succeeded and first.last.uid == 65532, first.log
    assert schema_version(cluster) == "1"

    # --reuse-values keeps release 1's controller image under chart 2: refused as a pairing
    # mismatch, naming the image that goes with this chart.
    reused = helm("upgrade", "rel", chart("2.0.0"), "-n", namespace, "--reuse-values")
    assert reused.returncode != 0, show(reused)
    refused = guard.wait(2, timeout=60)
    assert not refused.succeeded
    assert "UG602" in refused.log and "2.0.0" in refused.log, refused.log
    assert "UG602" in reused.stderr, show(reused)  # helm prints the failed hook's log
    assert schema_version(cluster) == "1"

    # The way out it prints, typed (--reset-then-reuse-values, the paired tag set): passes.
    now = printed(refused.log, "  now: ", under="error UG602 ")
    assert now == (f"helm upgrade rel -n {namespace} CHART --reset-then-reuse-values"
                   " [your flags] --set image.tag=2.0.0")  # fmt: skip
    reset = shell(typed(now, chart("2.0.0")))
    assert reset.returncode == 0, show(reset)
    assert guard.wait(3, timeout=60).succeeded
    assert schema_version(cluster) == "2"
    live = cluster.admin.get(CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "suspend" in live["properties"]["spec"]["properties"]

    # The 2.0.0 controller has written state version 2 into a Backup without a target.
    backups = f"/apis/example.io/v1/namespaces/{namespace}/backups"
    cluster.admin.create(backups, {"apiVersion": "example.io/v1", "kind": "Backup",
                                   "metadata": {"name": "nightly"},
                                   "spec": {"schedule": "0 3 * * *"}})  # fmt: skip
    cluster.admin.patch(f"{backups}/nightly/status", {"status": {"stateVersion": 2}})

    # Release 3 makes target required, and the stored Backup has none: refused, with the
    # evidence naming it in helm's own output; the live CRD and the release stay as they were.
    # Without a policy the chart names no stored-state resource: the guard lists Backups
    # because the chart lists their CRD (Chart.yaml's upgrade-guard.io/crds).
    unsafe = helm("upgrade", "rel", chart("3.0.0"), "-n", namespace, *GUARD_VALUES, *NO_POLICY)
    assert unsafe.returncode != 0, show(unsafe)
    third = guard.wait(4, timeout=60)
    assert not third.succeeded
    assert third.log.startswith("upgrade-guard REFUSED"), third.log
    assert "upgrade-guard REFUSED" in unsafe.stderr, show(unsafe)
    assert "spec.target" in unsafe.stderr, show(unsafe)
    evidence = (
        f"evidence: 1 of 1 backups affected: {namespace}/nightly; refused on CREATE and on any"
        " change of spec; other updates pass by ratcheting"
    )
    assert evidence in unsafe.stderr, show(unsafe)
    assert schema_version(cluster) == "2"
    assert helm_status(helm, namespace) == "failed"
    history = helm("history", "rel", "-n", namespace, "-o", "json")
    deployed = [r for r in json.loads(history.stdout) if r["status"] == "deployed"]
    assert [r["chart"] for r in deployed] == ["example-operator-2.0.0"]

    # The same upgrade once the Backup has a target: no stored object is affected, so the
    # finding is a warning and release 3 is applied.
    cluster.admin.patch(f"{backups}/nightly", {"spec": {"target": "s3://backups"}})
    fixed = helm("upgrade", "rel", chart("3.0.0"), "-n", namespace, *GUARD_VALUES, *NO_POLICY)
    assert fixed.returncode == 0, show(fixed)
    fourth = guard.wait(5, timeout=60)
    assert fourth.succeeded, fourth.log
    assert "evidence: no stored object affected (1 checked)" in fourth.log, fourth.log
    assert schema_version(cluster) == "3"

    # Rolling back to release 1 runs release 1's own pre-rollback hook, which reads state
    # version 1 only: refused, naming the Backup that holds state version 2.
    rollback = helm("rollback", "rel", "1", "-n", namespace)
    assert rollback.returncode != 0, show(rollback)
    fifth = guard.wait(6, timeout=60)
    assert not fifth.succeeded
    assert "UG605" in fifth.log and "nightly" in fifth.log, fifth.log
    assert fifth.log.startswith("upgrade-guard REFUSED: pre-rollback of 1 CRD"), fifth.log
    assert schema_version(cluster) == "3"
    # Helm leaves the release pending-rollback: upgrades now say another operation is in
    # progress. The way out: roll back to the revision that is deployed (its own hook passes).
    assert helm_status(helm, namespace) == "pending-rollback"
    blocked = helm("upgrade", "rel", chart("3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert "another operation (install/upgrade/rollback) is in progress" in blocked.stderr
    history = helm("history", "rel", "-n", namespace, "-o", "json")
    deployed = [r for r in json.loads(history.stdout) if r["status"] == "deployed"]
    assert [r["chart"] for r in deployed] == ["example-operator-3.0.0"]
    out = helm("rollback", "rel", str(deployed[0]["revision"]), "-n", namespace)
    assert out.returncode == 0, show(out)
    assert guard.wait(7, timeout=60).succeeded
    assert helm_status(helm, namespace) == "deployed"
    upgrade = helm("upgrade", "rel", chart("3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert upgrade.returncode == 0, show(upgrade)
    assert guard.wait(8, timeout=60).succeeded


def test_an_admin_acceptance_lets_one_refused_upgrade_through_and_no_other(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    shell: ToolRunner,
    guard_image: Image,
    tmp_path: Path,
) -> None:
    """Chart 3.0.0 makes spec.target required while a stored Backup has none: refused, with
    the entry that accepts exactly that finding. Given by the command it prints, the upgrade
    passes and the verdict says ACCEPTED. --reuse-values carries the value into the next
    chart version (3.0.1), where the acceptance is refused as stale instead of applied;
    dropping it, by the command printed, lets that upgrade through."""
    guard = fresh_install(cluster, namespace, job_runner, helm, "2.0.0")
    backups = f"/apis/example.io/v1/namespaces/{namespace}/backups"
    cluster.admin.create(backups, {"apiVersion": "example.io/v1", "kind": "Backup",
                                   "metadata": {"name": "nightly"},
                                   "spec": {"schedule": "0 3 * * *"}})  # fmt: skip

    three = str(EXAMPLE / "3.0.0")
    refused = helm("upgrade", "rel", three, "-n", namespace, *GUARD_VALUES, *NO_POLICY)
    assert refused.returncode != 0, show(refused)
    log = guard.wait(2, timeout=60).log
    entries = [line.split("accept: ", 1)[1] for line in log.splitlines()
               if line.startswith("  accept: ") and "spec.target" in line]  # fmt: skip
    assert len(entries) == 1, log
    entry = json.loads(entries[0])
    assert entry["chart"] == "3.0.0" and entry["crd"] == "backups.example.io", entry
    assert schema_version(cluster) == "2"

    # The accept command it prints, typed with the flags given and the entry.
    command = typed(printed(log, "each refusal: "), three, (*GUARD_VALUES, *NO_POLICY), entries)
    accepted = shell(command)
    assert accepted.returncode == 0, show(accepted)
    passed = guard.wait(3, timeout=60)
    assert passed.succeeded, passed.log
    assert passed.log.startswith(
        "upgrade-guard SAFE with 1 finding ACCEPTED by the cluster admin: pre-upgrade"
    ), passed.log
    assert f"ACCEPTED {entry['code']} " in passed.log, passed.log
    # helm prints the passing hook's log too (hook-output-log-policy: hook-succeeded)
    assert f"ACCEPTED {entry['code']} " in accepted.stderr, show(accepted)
    assert schema_version(cluster) == "3"

    # The next chart version, the same CRDs: --reuse-values keeps the acceptance, which names
    # chart 3.0.0, so it is refused rather than carried.
    next_chart = copy_release("3.0.0", tmp_path / "3.0.1")
    chart_yaml = next_chart / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 3.0.0", "version: 3.0.1"))
    carried = helm("upgrade", "rel", str(next_chart), "-n", namespace, "--reuse-values")
    assert carried.returncode != 0, show(carried)
    stale = guard.wait(4, timeout=60).log
    assert stale.startswith("upgrade-guard REFUSED"), stale
    assert "UG903" in stale and "it was given for chart 3.0.0, this is chart 3.0.1" in stale
    assert "UG903" in carried.stderr, show(carried)  # helm prints the failed hook's log
    # The way out it prints, typed: the acceptances dropped.
    dropped = shell(typed(printed(stale, "  now: ", under="error UG903 "), str(next_chart)))
    assert dropped.returncode == 0, show(dropped)
    assert guard.wait(5, timeout=60).succeeded


@pytest.fixture(scope="module")
def gitops_bin() -> Path:
    found = subprocess.run(
        [str(REPO / "tools" / "gitops" / "build.sh"), "--print-bin-dir"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        pytest.fail("the GitOps oracles are not built: run tools/gitops/build.sh", pytrace=False)
    return Path(found.stdout.strip())


def test_argo_cd_runs_the_guard_as_presync_before_the_crds(
    cluster: Cluster,
    namespace: str,
    helm: ToolRunner,
    kubectl: ToolRunner,
    gitops_bin: Path,
    tmp_path: Path,
) -> None:
    """Argo CD renders with `helm template`, passing the API versions the cluster serves
    (so the admission policy renders), and classifies with its own hook code."""
    rendered = helm("template", "rel", str(EXAMPLE / "2.0.0"), "-n", namespace, *GUARD_VALUES,
                    "--api-versions", VAP_API)  # fmt: skip
    assert rendered.returncode == 0, show(rendered)
    oracle = subprocess.run([str(gitops_bin / "argocd-oracle")], input=rendered.stdout,
                            capture_output=True, text=True, check=True)  # fmt: skip
    rows = [json.loads(line) for line in oracle.stdout.splitlines()]
    classified = {(r["kind"], r["hook"], tuple(r["phases"]), r["wave"]) for r in rows}
    assert classified == {
        ("CustomResourceDefinition", False, ("Sync",), 0),
        ("Deployment", False, ("Sync",), 0),
        # The guard's lasting grant to read the chart's CRDs, synced with the release.
        ("ClusterRole", False, ("Sync",), 0),
        ("ClusterRoleBinding", False, ("Sync",), 0),
        # The admission policy that holds the CRDs' counters between syncs.
        ("ValidatingAdmissionPolicy", False, ("Sync",), 0),
        ("ValidatingAdmissionPolicyBinding", False, ("Sync",), 0),
        ("ServiceAccount", True, ("PreSync",), -10),
        ("ConfigMap", True, ("PreSync",), -10),
        ("ClusterRole", True, ("PreSync",), -10),
        ("ClusterRoleBinding", True, ("PreSync",), -10),
        ("Role", True, ("PreSync",), -10),
        ("RoleBinding", True, ("PreSync",), -10),
        ("Job", True, ("PreSync",), -5),
    }
    # Recreated before each sync (a named hook without it would run only once).
    assert all("BeforeHookCreation" in r["deletePolicies"] for r in rows if r["hook"])
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(rendered.stdout)
    # An earlier test's release may have left a newer CRD, which its policy holds.
    without_the_example_crd(cluster)
    dry_run = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", str(manifest))
    assert dry_run.returncode == 0, show(dry_run)


def test_helm_runs_the_guard_as_two_hooks(helm: ToolRunner) -> None:
    """Helm writes the whole release record before each hook it runs: what the Job needs is
    one List hook (created and deleted together), then the Job, whose log Helm prints."""
    rendered = helm("template", "rel", str(EXAMPLE / "2.0.0"), *GUARD_VALUES)
    assert rendered.returncode == 0, show(rendered)
    hooks = [d for d in yaml.safe_load_all(rendered.stdout)
             if d and "helm.sh/hook" in (d["metadata"].get("annotations") or {})]  # fmt: skip
    weights = [(d["kind"], d["metadata"]["annotations"]["helm.sh/hook-weight"]) for d in hooks]
    assert sorted(weights) == [("Job", "-5"), ("List", "-10")]
    (listed,) = (d for d in hooks if d["kind"] == "List")
    assert sorted(item["kind"] for item in listed["items"]) == [
        "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"
    ]  # fmt: skip


def test_flux_keeps_the_guard_in_front_of_crds_shipped_in_templates(gitops_bin: Path) -> None:
    """helm-controller applies `upgrade.crds: Create`/`CreateReplace` to a chart's crds/
    before the upgrade starts, past any pre-upgrade hook. The example chart ships its CRDs in
    templates/, which Helm applies only after the guard passed, under every policy; its
    HelmRelease keeps helm-controller's default, Skip, so crds/ is never applied on upgrade."""
    for release in ("1.0.0", "2.0.0", "3.0.0"):
        assert not (EXAMPLE / release / "crds").exists()
        assert (EXAMPLE / release / "templates" / "crds" / "backups.yaml").is_file()
    rendered = subprocess.run(
        [str(gitops_bin / "flux-helmrelease"), "-name", "example-operator", "-chart",
         "example-operator", "-source", "charts", "-version", "2.0.0"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    release = yaml.safe_load(rendered.stdout)
    assert release["kind"] == "HelmRelease"
    assert release["spec"]["install"]["crds"] == "Create"
    assert release["spec"]["upgrade"]["crds"] == "Skip"


def test_a_bundle_at_packs_limit_fits_the_release_secret_and_half_as_much_again_does_not(
    cluster: Cluster, namespace: str, helm: ToolRunner, tmp_path: Path
) -> None:
    """What `pack`'s size limit rests on: Helm stores the bundle twice (chart file and hook
    manifest) in the release Secret, which the apiserver caps at 1 MiB."""
    sizes = {"at-limit": BUNDLE_LIMIT, "over": BUNDLE_LIMIT * 3 // 2}
    for name, size in sizes.items():
        chart = tmp_path / name
        shutil.copytree(EXAMPLE / "1.0.0", chart)  # follows charts/upgrade-guard's symlink
        shutil.rmtree(chart / "templates" / "crds")  # only the bundle's size is at stake
        metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
        metadata["annotations"]["upgrade-guard.io/crd-templates"] = "none"
        (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata))
        noise = gzip.compress(os.urandom(size), compresslevel=0)[:size]  # incompressible
        (chart / "upgrade-guard" / "crds.json.gz").write_bytes(noise)
        result = helm("install", name, str(chart), "-n", namespace, "--no-hooks")
        if name == "at-limit":
            assert result.returncode == 0, show(result)
            secret = cluster.admin.get(
                f"/api/v1/namespaces/{namespace}/secrets/sh.helm.release.v1.{name}.v1"
            )
            stored = len(base64.b64decode(secret["data"]["release"]))
            assert 2 * size < stored < 1024 * 1024
        else:
            assert result.returncode != 0
            assert "may not be more than 1048576 bytes" in result.stderr, show(result)


def test_the_role_gets_the_release_records_by_name_only(helm: ToolRunner) -> None:
    """The hook reads Helm's release records: `get` on the record Secrets of its release by
    name, from 16 revisions below to 32 above the one it was rendered at (a rollback runs
    hooks rendered at an earlier revision), never `list` and no other Secret."""
    rendered = helm("template", "rel", str(EXAMPLE / "1.0.0"), "--show-only",
                    "templates/upgrade-guard.yaml")  # fmt: skip
    assert rendered.returncode == 0, show(rendered)
    role = next(d for d in objects_of(yaml.safe_load_all(rendered.stdout)) if d["kind"] == "Role")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
         "resourceNames": [f"sh.helm.release.v1.rel.v{n}" for n in range(1, 34)]},
    ]  # fmt: skip
