"""The guard on a real operator chart: cert-manager's published chart at v1.18.0 and v1.19.0
(/work/shared/charts/cert-manager, see its SOURCE.txt), adopted by exactly the steps of
docs/chart-adoption.md (read from that page: the page and this test cannot drift), installed,
upgraded and rolled back with the real helm against the real apiserver, the guard's Job run
from the real image under the apiserver's own Pod Security admission (`restricted`).

One control plane serves every scenario in sequence; each prints its command, exit code and
the guard's first report line."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ways_out import printed, typed

from testenv import (
    GUARD_IMAGE,
    Cluster,
    Image,
    JobHandle,
    JobRunner,
    KubeError,
    ToolRunner,
    objects_of,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
CHARTS = Path(os.environ.get("UPGRADE_GUARD_SHARED", "/work/shared")) / "charts" / "cert-manager"
ADOPTION = REPO / "docs" / "chart-adoption.md"
LIBRARY = REPO / "chart-snippets" / "upgrade-guard"
VENV_BIN = REPO / ".venv" / "bin"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD_NAMES = sorted(
    f"{plural}.{group}"
    for group, plurals in {
        "cert-manager.io": ("certificaterequests", "certificates", "clusterissuers", "issuers"),
        "acme.cert-manager.io": ("challenges", "orders"),
    }.items()
    for plural in plurals
)
GUARD_VALUES = (
    "--set", f"upgrade-guard.image.repository={GUARD_IMAGE.split(':')[0]}",
    "--set", f"upgrade-guard.image.tag={GUARD_IMAGE.split(':')[1]}",
)  # fmt: skip
# The test cluster runs no cert-manager controller: its post-install API check would wait.
BASE_VALUES = (*GUARD_VALUES, "--set", "startupapicheck.enabled=false")
RESTRICTED = "pod-security.kubernetes.io/enforce"


@pytest.fixture(autouse=True)
def _requires_the_charts() -> None:
    """cert-manager's published charts live outside the repository (never committed): a
    skip without them, a failure under CI=true."""
    if not CHARTS.is_dir():
        message = f"cert-manager's charts are not at {CHARTS} (UPGRADE_GUARD_SHARED)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)


def show(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


# ---------------------------------------------------------------- adoption, from the docs


def adoption_steps(heading: str = "Adopt the guard in six steps") -> list[tuple[str, str]]:
    """The fenced blocks of the page's section HEADING: (language, text)."""
    text = ADOPTION.read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [
        (language, textwrap.dedent(body))
        for language, body in re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    ]


def _merge(target: dict[str, Any], addition: dict[str, Any]) -> None:
    for key, value in addition.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif isinstance(value, list) and isinstance(target.get(key), list):
            target[key].extend(value)
        else:
            target[key] = value


def _allow_library_values(schema_file: Path, line: str) -> None:
    """Step 2: the line, beside the top-level properties (behind a top-level $ref)."""
    schema = json.loads(schema_file.read_text())
    top = schema
    reference = schema.get("$ref", "")
    if reference.startswith("#/"):
        for part in reference[2:].split("/"):
            top = top[part]
    top["properties"].update(json.loads("{" + line.strip() + "}"))
    schema_file.write_text(json.dumps(schema, indent=2) + "\n")


def apply_step(chart: Path, language: str, body: str, env: dict[str, str]) -> None:
    """One block of the page applied to CHART: a shell block run in it line by line, a
    `# Chart.yaml` block merged into its Chart.yaml, any other written to the file its first
    line names."""
    first = body.splitlines()[0]
    if language == "sh":
        for command in body.splitlines():
            done = subprocess.run(command, shell=True, cwd=chart, env=env,
                                  capture_output=True, text=True)  # fmt: skip
            assert done.returncode == 0, f"{command}\n{show(done)}"
    elif first.startswith("# Chart.yaml"):
        metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
        _merge(metadata, yaml.safe_load(body))
        (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))
    else:
        target = chart / first.removeprefix("# ").strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)


def adopt(version: str, workdir: Path, env: dict[str, str]) -> Path:
    """A copy of cert-manager VERSION with the guard adopted by the page's steps, the
    library beside it where the page's `file://../upgrade-guard` finds it."""
    chart = workdir / "cert-manager"
    shutil.copytree(CHARTS / version, chart)
    shutil.copytree(LIBRARY, workdir / "upgrade-guard")
    for path in [chart, *chart.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    for language, body in adoption_steps():
        differs = re.search(r"what differs at cert-manager (v[0-9.]+)", body.splitlines()[0])
        if language == "json":
            _allow_library_values(chart / "values.schema.json", body)
        elif differs is None or differs.group(1) == version:
            apply_step(chart, language, body, env)
    return chart


# ---------------------------------------------------------------- the scenarios


class Scenarios:
    """Runs helm, waits for the guard's Job, and records each scenario for the closing note."""

    def __init__(self, helm: ToolRunner, guard: JobHandle) -> None:
        self.helm = helm
        self.guard = guard
        self.runs = 0
        self.rows: list[str] = []

    def run(self, name: str, *args: str, hook: bool = True) -> tuple[int, str, str]:
        """(exit code, the guard's log, helm's stderr) of one helm command."""
        result = self.helm(*args, timeout=300)
        log = ""
        if hook:
            self.runs += 1
            log = self.guard.wait(self.runs, timeout=240).log
        first = log.splitlines()[0] if log else "(no hook run)"
        shown = " ".join(a for a in args if not a.startswith("upgrade-guard.image"))
        self.rows.append(f"{name}\n  $ helm {shown}\n  exit {result.returncode}: {first}")
        print(self.rows[-1])
        return result.returncode, log, result.stderr


@pytest.fixture
def scenarios(helm: ToolRunner, job_runner: JobRunner, namespace: str) -> Iterator[Scenarios]:
    recorded = Scenarios(helm, job_runner.expect(namespace, "cm-upgrade-guard"))
    try:
        yield recorded
    finally:
        print("\n".join(["", "cert-manager scenarios:", *recorded.rows]))


def tool_env(cluster: Cluster) -> dict[str, str]:
    env = cluster.env(None)
    env["PATH"] = os.pathsep.join([str(cluster.binaries.bin_dir), str(VENV_BIN), env["PATH"]])
    return env


def crd(cluster: Cluster, name: str) -> Any:
    return cluster.admin.get_or_none(f"{CRDS}/{name}")


def release_status(helm: ToolRunner, namespace: str) -> str:
    result = helm("status", "cm", "-n", namespace, "-o", "json")
    return str(json.loads(result.stdout)["info"]["status"])


def store_certificates(cluster: Cluster, namespace: str) -> str:
    """An Issuer and the Certificates web and api stored without issuerRef.kind and .group
    (v1.19.0 defaults them), after every release's cert-manager webhook configurations are
    deleted (cluster-wide, they outlive the test that installed them): no cert-manager
    webhook runs here, and the apiserver must not call it. Returns the API path of the
    namespace's cert-manager.io objects."""
    for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
        path = f"/apis/admissionregistration.k8s.io/v1/{kind}"
        for configuration in cluster.admin.get(path)["items"]:
            name = configuration["metadata"]["name"]
            if name.endswith("-cert-manager-webhook"):
                cluster.admin.delete(f"{path}/{name}")
    base = f"/apis/cert-manager.io/v1/namespaces/{namespace}"
    cluster.admin.create(f"{base}/issuers", {
        "apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": {"name": "self"},
        "spec": {"selfSigned": {}}})  # fmt: skip
    for name in ("web", "api"):
        cluster.admin.create(f"{base}/certificates", {
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": name},
            "spec": {"secretName": f"{name}-tls", "dnsNames": [f"{name}.example.com"],
                     "issuerRef": {"name": "self"}}})  # fmt: skip
    return base


def test_cert_manager_adopted_from_the_docs_through_install_upgrade_and_rollback(
    cluster: Cluster,
    namespace: str,
    helm: ToolRunner,
    kubectl: ToolRunner,
    scenarios: Scenarios,
    guard_image: Image,
    tmp_path: Path,
    shell: ToolRunner,
    helm_guard_plugin: None,
) -> None:
    env = tool_env(cluster)
    old = str(adopt("v1.18.0", tmp_path / "v1.18.0", env))
    new = str(adopt("v1.19.0", tmp_path / "v1.19.0", env))
    ns = ("-n", namespace)
    # The hook's Pod must pass the apiserver's own Pod Security admission.
    cluster.admin.patch(f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": {
        RESTRICTED: "restricted"}}})  # fmt: skip
    privileged = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                  "spec": {"containers": [{"name": "c", "image": "x"}]}}  # fmt: skip
    with pytest.raises(KubeError, match="violates PodSecurity"):
        cluster.admin.create(f"/api/v1/namespaces/{namespace}/pods", privileged, dryRun="All")

    # 1. Install v1.18.0, the controller image pinned (as an admin pins a tag).
    code, log, err = scenarios.run(
        "install v1.18.0", "install", "cm", old, *ns, *BASE_VALUES,
        "--set", "crds.enabled=true", "--set", "image.tag=v1.18.0",
    )  # fmt: skip
    assert code == 0, err
    assert log.startswith("upgrade-guard SAFE: pre-install of 6 CRDs"), log
    assert all(crd(cluster, name) for name in CRD_NAMES)
    base = store_certificates(cluster, namespace)

    # 2. --reuse-values keeps the pinned v1.18.0 image under chart v1.19.0: refused as a
    # chart/image mismatch, naming the image that goes with the chart.
    code, log, err = scenarios.run(
        "upgrade to v1.19.0 with --reuse-values (v1.18.0 image kept)",
        "upgrade", "cm", new, *ns, "--reuse-values",
    )  # fmt: skip
    assert code != 0 and "UG602" in log and "v1.19.0" in log, log
    assert log.startswith("upgrade-guard REFUSED: pre-upgrade"), log
    # Its way out, typed: the paired tag set over the release's own values. The image is
    # no longer refused; the schema still is (step 4).
    now = printed(log, "  now: ", under="error UG602 ")
    assert now == (f"helm upgrade cm -n {namespace} CHART --reset-then-reuse-values"
                   " [your flags] --set image.tag=v1.19.0")  # fmt: skip
    code, log, err = scenarios.run("the way out printed", "upgrade", *shlex.split(
        typed(now, new))[2:])  # fmt: skip
    assert code != 0 and "UG602" not in log and "UG212" in log, log

    # 3. An image the table does not list: refused (fails closed).
    code, log, err = scenarios.run(
        "upgrade to v1.19.0 with an image missing from the table",
        "upgrade", "cm", new, *ns, "--reset-values", *BASE_VALUES,
        "--set", "crds.enabled=true", "--set", "image.tag=v1.19.9",
    )  # fmt: skip
    assert code != 0 and "UG601" in log and "v1.19.9" in log, log

    # 4. Upgrade to v1.19.0: issuerRef.kind and .group get defaults, which would change the
    # two stored Certificates that leave them out: refused, naming them.
    upgrade = ("upgrade", "cm", new, *ns, "--reset-values", *BASE_VALUES,
               "--set", "crds.enabled=true")  # fmt: skip
    code, log, err = scenarios.run("upgrade to v1.19.0", *upgrade)
    assert code != 0 and "UG212" in log, log
    assert f"{namespace}/api" in log and f"{namespace}/web" in log, log
    # cert-manager's CRDs carry no schema version, but the release being replaced ran the
    # guard already: no "first adoption" again.
    assert "UG606" not in log, log
    # The way out the report gives the admin: set the field on the named objects; followed,
    # the same upgrade passes.
    assert "now: set the field on the stored objects the evidence names" in log, log
    for name in ("web", "api"):
        cluster.admin.patch(f"{base}/certificates/{name}", {"spec": {"issuerRef": {
            "kind": "Issuer", "group": "cert-manager.io"}}})  # fmt: skip
    code, log, err = scenarios.run("upgrade to v1.19.0, issuerRef set on the Certificates",
                                   *upgrade)  # fmt: skip
    assert code == 0, log + err
    assert log.startswith("upgrade-guard SAFE: pre-upgrade of 6 CRDs"), log
    assert release_status(helm, namespace) == "deployed"
    # v1.19.0 merges the DNS01 and HTTP01 challenge ClusterRoles into one: the release
    # records say both are dropped (UG401, a warning), whoever bound or pinned them loses them.
    for solver in ("dns01", "http01"):
        dropped = f"warning UG401 role-permission-removed ClusterRole cm-cert-manager-{solver}"
        assert dropped in log, log

    # 5. Rolling back to v1.18.0 (revision 1): its controller reads state version 1, the
    # deployed v1.19.0 writes 2: refused, and the verdict says it is a rollback.
    code, log, err = scenarios.run("rollback to revision 1 (v1.18.0)", "rollback", "cm", "1", *ns)
    assert code != 0 and "UG605" in log, log
    assert log.startswith("upgrade-guard REFUSED: pre-rollback of 6 CRDs"), log
    assert "UG606" not in log  # the guard ran before: no second first adoption
    rollback_way_out(scenarios, kubectl, helm, namespace, log, upgrade)

    # 6. crds.enabled=false on the deployed release, with cert-manager's default
    # crds.keep=true: the live CRDs carry helm.sh/resource-policy: keep, so Helm leaves them
    # (and the Certificates) in place: passes.
    disabled = ("upgrade", "cm", new, *ns, "--reset-values", *BASE_VALUES)
    code, log, err = scenarios.run("crds.enabled=false, crds.keep=true (default)", *disabled)
    assert code == 0 and log.startswith("upgrade-guard SAFE: pre-upgrade of 0 CRDs"), log + err
    assert all(crd(cluster, name) for name in CRD_NAMES)
    assert len(cluster.admin.get(f"{base}/certificates")["items"]) == 2

    # 7. The CRDs applied again without the keep policy, then switched off: Helm would
    # delete all six and the stored Certificates with them: refused, naming each.
    code, log, err = scenarios.run(
        "crds.enabled=true, crds.keep=false", *upgrade, "--set", "crds.keep=false"
    )
    assert code == 0, log + err
    assert not any("helm.sh/resource-policy" in (crd(cluster, n)["metadata"].get("annotations")
                                                 or {}) for n in CRD_NAMES)  # fmt: skip
    code, log, err = scenarios.run(
        "crds.enabled=false, crds.keep=false", *disabled, "--set", "crds.keep=false"
    )
    assert code != 0 and log.startswith("upgrade-guard REFUSED: pre-upgrade of 0 CRDs"), log
    assert log.startswith("upgrade-guard REFUSED: pre-upgrade of 0 CRDs; 6 error"), log
    assert "UG608 crd-deleted certificates.cert-manager.io" in log, log
    assert f"the 2 object(s) stored in it ({namespace}/api, {namespace}/web)" in log, log
    assert all(crd(cluster, name) for name in CRD_NAMES)
    # Each CRD's way out, typed: annotated keep, Helm leaves them and the Certificates
    # (unmanaged); the upgrade passes. The log holds as many ways out as 4 KiB leave room
    # for, else its last line says where the whole report is: the plugin's, typed with the
    # same flags.
    report = log
    if "the whole report: " in log:
        flags = [*disabled[5:], "--set", "crds.keep=false"]
        whole = shell(typed(printed(log, "the whole report: "), new, flags))
        assert whole.returncode == 1, show(whole)
        report = whole.stdout
    for name in CRD_NAMES:
        command = printed(report, "  now: ", under=f"error UG608 crd-deleted {name}")
        assert command == f"kubectl annotate crd {name} helm.sh/resource-policy=keep", command
        assert kubectl(*shlex.split(command)[1:]).returncode == 0
    code, kept, err = scenarios.run("the way out printed: keep annotated, then the same", *disabled,
                                    "--set", "crds.keep=false")  # fmt: skip
    assert code == 0 and kept.startswith("upgrade-guard SAFE: pre-upgrade of 0 CRDs"), kept + err
    assert all(crd(cluster, name) for name in CRD_NAMES)
    assert len(cluster.admin.get(f"{base}/certificates")["items"]) == 2
    # The CRDs applied by the release again, the annotation gone (kubectl's own form).
    for name in CRD_NAMES:
        assert kubectl("annotate", "crd", name, "helm.sh/resource-policy-").returncode == 0
    code, log, err = scenarios.run("crds.enabled=true again", *upgrade, "--set", "crds.keep=false")
    assert code == 0, log + err
    # What the guard refused, Helm does without the hook, but the apiserver refuses it too:
    # the release's admission policy holds the CRDs, and the Certificates stay.
    code, _, err = scenarios.run("the same with --no-hooks", *disabled, "--set",
                                 "crds.keep=false", "--no-hooks", hook=False)  # fmt: skip
    assert code != 0, err
    assert "deleting the CRD certificates.cert-manager.io deletes every object stored in it" in err
    assert all(crd(cluster, name) for name in CRD_NAMES)
    assert len(cluster.admin.get(f"{base}/certificates")["items"]) == 2
    # Deleted on purpose, as the refusal says: the acceptance on each CRD, then the same.
    accept = {"metadata": {"annotations": {"upgrade-guard.io/accept-delete": "true"}}}
    for name in CRD_NAMES:
        cluster.admin.patch(f"{CRDS}/{name}", accept)
    code, _, err = scenarios.run("the same, each CRD's deletion accepted", *disabled, "--set",
                                 "crds.keep=false", "--no-hooks", hook=False)  # fmt: skip
    assert code == 0, err
    # The apiserver deletes a CRD's objects, then the CRD (its cleanup finalizer).
    wait_for(lambda: not any(crd(cluster, name) for name in CRD_NAMES), timeout=120,
             what="the six CRDs deleted")  # fmt: skip


def rollback_way_out(
    scenarios: Scenarios, kubectl: ToolRunner, helm: ToolRunner, namespace: str, log: str,
    upgrade: tuple[str, ...],
) -> None:  # fmt: skip
    """The way out the refused rollback prints, followed literally: Helm keeps the refused
    rollback's record pending (upgrades say "another operation is in progress"), and a
    `helm rollback` to the deployed revision fails on this chart ("original object
    ClusterRole ... not found": it diffs against that never-applied record). Deleting the
    record restores the release as it was before the rollback."""
    assert release_status(helm, namespace) == "pending-rollback"
    blocked = helm("upgrade", *upgrade[1:])
    assert "another operation (install/upgrade/rollback) is in progress" in blocked.stderr
    command = re.search(r"way out of this rollback: .*?`(kubectl [^`]+)`", log)
    assert command is not None, log
    deleted = kubectl(*shlex.split(command.group(1))[1:])
    scenarios.rows.append(f"way out of the refused rollback\n  $ {command.group(1)}\n"
                          f"  exit {deleted.returncode}")  # fmt: skip
    print(scenarios.rows[-1])
    assert deleted.returncode == 0, show(deleted)
    assert release_status(helm, namespace) == "deployed"
    code, log, err = scenarios.run("upgrade after the way out", *upgrade)
    assert code == 0 and log.startswith("upgrade-guard SAFE: pre-upgrade of 6 CRDs"), log + err
    assert release_status(helm, namespace) == "deployed"


def test_a_fresh_install_with_the_crds_off_judges_no_crd(
    cluster: Cluster, namespace: str, helm: ToolRunner, job_runner: JobRunner,
    guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    chart = adopt("v1.19.0", tmp_path, tool_env(cluster))
    guard = job_runner.expect(namespace, "cm2-upgrade-guard")
    result = helm("install", "cm2", str(chart), "-n", namespace, *BASE_VALUES, timeout=300)
    log = guard.wait(1, timeout=240).log
    print(f"fresh install, crds.enabled=false\n  $ helm install cm2 cert-manager -n {namespace}"
          f"\n  exit {result.returncode}: {log.splitlines()[0] if log else ''}")  # fmt: skip
    assert result.returncode == 0, show(result)
    assert log.startswith("upgrade-guard SAFE: pre-install of 0 CRDs"), log


def test_under_argo_cd_the_bundle_is_judged_filtered_to_the_crds_the_release_renders(
    cluster: Cluster, namespace: str, helm: ToolRunner, kubectl: ToolRunner,
    job_runner: JobRunner, guard_image: Image, tmp_path: Path,
) -> None:  # fmt: skip
    """Argo CD renders with `helm template` and keeps no release record: the hook finds
    none and judges the packed bundle (the docs' step 6), only the CRDs this render applies.
    Its PreSync hooks are applied as Argo CD does, in wave order, recreated each sync."""
    chart = adopt("v1.19.0", tmp_path, tool_env(cluster))
    guard = job_runner.expect(namespace, "app-upgrade-guard")
    for run, (values, verdict) in enumerate(
        [(("--set", "crds.enabled=true"), "pre-install of 6 CRDs"), ((), "pre-install of 0 CRDs")],
        start=1,
    ):
        rendered = helm("template", "app", str(chart), "-n", namespace, *BASE_VALUES, *values)
        assert rendered.returncode == 0, show(rendered)
        hooks = [
            d
            for d in objects_of(yaml.safe_load_all(rendered.stdout))
            if "argocd.argoproj.io/hook" in (d["metadata"].get("annotations") or {})
        ]
        hooks.sort(key=lambda d: int(d["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]))
        manifest = tmp_path / f"presync-{run}.yaml"
        manifest.write_text(yaml.safe_dump_all(hooks))
        kubectl("delete", "-n", namespace, "-f", str(manifest), "--ignore-not-found")
        created = kubectl("create", "-n", namespace, "-f", str(manifest))
        assert created.returncode == 0, show(created)
        log = guard.wait(run, timeout=240).log
        print(
            f"Argo CD PreSync, {' '.join(values) or 'crds.enabled=false'}\n"
            f"  exit {0 if log.startswith('upgrade-guard SAFE') else 1}: {log.splitlines()[0]}"
        )
        assert log.startswith(f"upgrade-guard SAFE: {verdict}"), log
