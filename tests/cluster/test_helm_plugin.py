"""`helm guard`, the Helm plugin (helm-guard/), installed with `helm plugin install` into the
real helm (v4) and run against the real apiserver, on a chart that adopted no guard:
tests/cluster/charts/gadgets, its Gadget CRD in crds/ and its Widget CRD in templates/.

Each refusal stands beside the nearest command that passes."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ways_out import entries, printed, typed

from testenv import Cluster, Image, JobRunner, ToolRunner, create_when_served
from upgrade_guard.counters import history
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import documents_of

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "helm-guard"
CHART = Path(__file__).parent / "charts" / "gadgets"
V1, V2 = str(CHART / "1.0.0"), str(CHART / "2.0.0")
GROUP = "/apis/plugin.example.io/v1/namespaces"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def show(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


@pytest.fixture
def guard(helm: ToolRunner, helm_guard_plugin: None) -> Iterator[ToolRunner]:
    """``guard(*args)``: ``helm guard ARGS``, its command line and first line printed."""

    def run(*args: str, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
        result = helm("guard", *args, kubeconfig=kubeconfig, timeout=240)
        first = result.stdout.splitlines()[0] if result.stdout else result.stderr[-300:]
        print(f"$ helm guard {' '.join(args)}\n  exit {result.returncode}: {first}")
        return result

    yield run


def judged(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The CRDs the plugin said it judged, with their spec digests (standard error)."""
    lines = [line.split() for line in result.stderr.splitlines()]
    return {words[2]: words[3] for words in lines if words[:2] == ["helm", "guard:"]
            and len(words) == 4 and words[3].startswith("sha256:")}  # fmt: skip


def rendered(helm: ToolRunner, *args: str) -> dict[str, str]:
    """The spec digest of each CRD a helm dry run renders."""
    done = helm(*args, "--dry-run=server", "--output", "json")
    assert done.returncode == 0, show(done)
    manifest = json.loads(done.stdout)["manifest"]
    return history.digests_of(crds_from(documents_of("dry run", manifest.encode())))


def create(cluster: Cluster, namespace: str, kind: str, name: str, spec: dict[str, Any]) -> None:
    body = {"apiVersion": "plugin.example.io/v1", "kind": kind, "metadata": {"name": name},
            "spec": spec}  # fmt: skip
    create_when_served(cluster.admin, f"{GROUP}/{namespace}/{kind.lower()}s", body)


def revisions(helm: ToolRunner, namespace: str) -> list[tuple[int, str]]:
    done = helm("history", "rel", "-n", namespace, "--output", "json")
    assert done.returncode == 0, show(done)
    return [(entry["revision"], entry["status"]) for entry in json.loads(done.stdout)]


def test_the_plugin_on_a_chart_with_crds_in_crds_dir_and_no_guard(
    cluster: Cluster, namespace: str, helm: ToolRunner, guard: ToolRunner, shell: ToolRunner
) -> None:
    ns = ("-n", namespace)
    listed = helm("plugin", "list")
    assert "guard" in listed.stdout and "cli/v1" in listed.stdout, show(listed)

    # Install with --run: judged, then installed by helm itself. crds/ counts on install.
    done = guard("install", "rel", V1, *ns, "--run")
    assert done.returncode == 0, show(done)
    assert done.stdout.startswith("upgrade-guard SAFE: pre-install of 2 CRDs"), show(done)
    assert revisions(helm, namespace) == [(1, "deployed")]
    create(cluster, namespace, "Widget", "w1", {})  # no mode
    create(cluster, namespace, "Gadget", "g1", {"size": 50})
    widgets = cluster.admin.get(f"{CRDS}/widgets.plugin.example.io")

    # 2.0.0 requires spec.mode (its new default strict: true): w1 has none. Refused, naming
    # it; nothing is written (no revision, the CRD as it was).
    done = guard("upgrade", "rel", V2, *ns)
    assert done.returncode == 1, show(done)
    assert done.stdout.startswith("upgrade-guard REFUSED: pre-upgrade of 1 CRD"), show(done)
    assert "error UG202 required-added widgets.plugin.example.io v1 spec.mode" in done.stdout
    assert f"1 of 1 widgets affected: {namespace}/w1" in done.stdout, show(done)
    accepting = printed(done.stdout, "each refusal: ")
    assert (
        accepting
        == f"helm guard upgrade rel -n {namespace} CHART [your flags] --accept 'ENTRY' --run"
    )
    assert "the chart's crds/ holds 1 file(s), which helm upgrade never applies" in done.stderr
    assert judged(done) == rendered(helm, "upgrade", "rel", V2, *ns)
    assert revisions(helm, namespace) == [(1, "deployed")]
    after = cluster.admin.get(f"{CRDS}/widgets.plugin.example.io")
    assert after["metadata"]["resourceVersion"] == widgets["metadata"]["resourceVersion"]
    # An identity that may only read gets the same verdict: helm's dry run and the checks
    # write nothing.
    reader = cluster.make_service_account(namespace, cluster_rules=[
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}])  # fmt: skip
    as_reader = guard("upgrade", "rel", V2, *ns, kubeconfig=reader)
    assert as_reader.returncode == 1, show(as_reader)
    assert findings_of(as_reader.stdout) == findings_of(done.stdout)
    # With only what helm's own dry run reads (the release's records), the checks name the
    # read they lack: exit 3.
    helm_only = cluster.make_service_account(namespace, [
        {"apiGroups": [""], "resources": ["secrets", "configmaps"],
         "verbs": ["get", "list", "watch"]}])  # fmt: skip
    lacking = guard("upgrade", "rel", V2, *ns, kubeconfig=helm_only)
    assert lacking.returncode == 3, show(lacking)
    assert "may not get customresourcedefinitions.apiextensions.k8s.io" in lacking.stderr
    assert "'widgets.plugin.example.io'" in lacking.stderr, show(lacking)
    # No value is ever shown, not even one that renders into the manifest.
    secret = guard("upgrade", "rel", V2, *ns, "--set", "strict=hunter2-value")
    assert secret.returncode == 1, show(secret)
    assert "hunter2" not in secret.stdout + secret.stderr

    # --reuse-values keeps 1.0.0's values, its defaults too (helm/helm#9000): strict stays
    # off, so nothing becomes required: passes. The CRDs judged are exactly those
    # `helm upgrade --reuse-values --dry-run=server` renders.
    done = guard("upgrade", "rel", V2, *ns, "--reuse-values")
    assert done.returncode == 0, show(done)
    assert judged(done) == rendered(helm, "upgrade", "rel", V2, *ns, "--reuse-values")
    assert judged(done) != judged(guard("upgrade", "rel", V2, *ns))
    # --reset-then-reuse-values takes 2.0.0's defaults: refused as without it.
    done = guard("upgrade", "rel", V2, *ns, "--reset-then-reuse-values")
    assert done.returncode == 1 and "UG202" in done.stdout, show(done)
    assert judged(done) == rendered(helm, "upgrade", "rel", V2, *ns, "--reset-then-reuse-values")

    # helm upgrade never applies crds/: `helm guard crds` checks them before the kubectl
    # apply. 2.0.0 bounds spec.size to 10, and g1 holds 50: refused, naming it. 1.0.0's are
    # the live ones: nothing to guard.
    done = guard("crds", V2)
    assert done.returncode == 1, show(done)
    assert done.stdout.startswith("upgrade-guard REFUSED: kubectl apply of 1 CRD"), show(done)
    assert "UG208 bound-tightened gadgets.plugin.example.io v1 spec.size" in done.stdout
    assert f"{namespace}/g1" in done.stdout, show(done)
    # Its accept command, typed with the entry (the chart version from helm show chart).
    command = typed(printed(done.stdout, "each refusal: "), V2, accepted=entries(done.stdout))
    assert command.startswith(f"helm guard crds {V2} --version 2.0.0 --accept "), command
    accepted = shell(command)
    assert accepted.returncode == 0, show(accepted)
    assert "ACCEPTED UG208 " in accepted.stdout, show(accepted)
    done = guard("crds", V1)
    assert done.returncode == 0 and "UG607" in done.stdout, show(done)

    # The way out the refusal names: set the field on w1. Then the upgrade passes and --run
    # upgrades.
    cluster.admin.patch(f"{GROUP}/{namespace}/widgets/w1", {"spec": {"mode": "fast"}})
    done = guard("upgrade", "rel", V2, *ns, "--run")
    assert done.returncode == 0, show(done)
    assert done.stdout.startswith("upgrade-guard SAFE: pre-upgrade of 1 CRD"), show(done)
    assert revisions(helm, namespace) == [(1, "superseded"), (2, "deployed")]

    # 2.0.0 wrote state version 2 (its Widget CRD's annotation); 1.0.0 reads 1: rolling back
    # to revision 1 is refused. Revision 2 (the deployed one) reads 2: passes.
    done = guard("rollback", "rel", "1", *ns)
    assert done.returncode == 1, show(done)
    assert done.stdout.startswith("upgrade-guard REFUSED: pre-rollback of 1 CRD"), show(done)
    assert "UG605" in done.stdout, show(done)
    assert "way out of this rollback" not in done.stdout  # no record is pending: none to delete
    assert revisions(helm, namespace) == [(1, "superseded"), (2, "deployed")]
    done = guard("rollback", "rel", "2", *ns)
    assert done.returncode == 0, show(done)
    assert done.stdout.startswith("upgrade-guard SAFE: pre-rollback of 1 CRD"), show(done)
    # The refused rollback's accept command, typed: judged again, passed, and helm rolls back
    # (revision 1 runs no guard of its own).
    refused = guard("rollback", "rel", "1", *ns)
    command = typed(printed(refused.stdout, "each refusal: "), accepted=entries(refused.stdout))
    assert command.startswith(f"helm guard rollback rel -n {namespace} 1 --accept "), command
    accepted = shell(command)
    assert accepted.returncode == 0, show(accepted)
    assert revisions(helm, namespace)[-1] == (3, "deployed")


def test_helm_4_applies_crds_dir_on_install_over_a_live_crd_and_the_plugin_judges_it(
    cluster: Cluster, namespace: str, helm: ToolRunner, guard: ToolRunner
) -> None:
    """`helm install` (server-side apply, Helm 4's default) applies the chart's crds/ over a
    CRD already there (Helm 3 created only the missing ones): an install is judged with
    them, unless --skip-crds."""
    ns = ("-n", namespace)
    crd = f"{CRDS}/gadgets.plugin.example.io"
    if cluster.admin.get_or_none(crd) is None:
        done = helm("install", "first", V1, *ns)
        assert done.returncode == 0, show(done)
        assert helm("uninstall", "first", *ns).returncode == 0  # crds/ stay
    create(cluster, namespace, "Gadget", "g2", {"size": 50})
    widgets = cluster.admin.get_or_none(f"{CRDS}/widgets.plugin.example.io")
    if widgets is not None:  # the other test's release owns it: not this one's to install
        cluster.admin.delete(f"{CRDS}/widgets.plugin.example.io")

    done = guard("install", "rel", V2, *ns)
    assert done.returncode == 1, show(done)
    assert done.stdout.startswith("upgrade-guard REFUSED: pre-install of 2 CRDs"), show(done)
    assert "UG208 bound-tightened gadgets.plugin.example.io v1 spec.size" in done.stdout
    assert f"{namespace}/g2" in done.stdout, show(done)
    done = guard("install", "rel", V2, *ns, "--skip-crds")
    assert done.returncode == 0, show(done)
    assert done.stdout.startswith("upgrade-guard SAFE: pre-install of 1 CRD"), show(done)

    # What the refusal says Helm would do, done without the plugin.
    done = helm("install", "rel", V2, *ns)
    assert done.returncode == 0, show(done)
    schema = cluster.admin.get(crd)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"]["properties"]["size"]["maximum"] == 10


REPORT_LINES = ("error ", "warning ", "info ", "excused ", "ACCEPTED ", "  evidence: ", "  at ")


def findings_of(report: str) -> list[str]:
    """A report's findings: each finding line with the places and evidence under it."""
    return [line for line in report.splitlines() if line.startswith(REPORT_LINES)]


def test_cert_manager_v1_18_to_v1_19_the_plugin_gives_the_adopted_hooks_findings(
    cluster: Cluster, namespace: str, helm: ToolRunner, guard: ToolRunner,
    job_runner: JobRunner, guard_image: Image, tmp_path: Path, shell: ToolRunner,
) -> None:  # fmt: skip
    """One release, judged three ways before the same upgrade: the plugin on cert-manager's
    published v1.19.0 chart (unmodified), the plugin on the chart adopted by the docs' steps,
    and that chart's own hook Job under `helm upgrade`. Then the adopted chart's accept
    command, typed with every entry: the plugin passes, runs helm, and the hook passes."""
    from test_cert_manager import BASE_VALUES, CHARTS, adopt, store_certificates, tool_env

    env = tool_env(cluster)
    adopted_old = str(adopt("v1.18.0", tmp_path / "adopted-v1.18.0", env))
    adopted_new = str(adopt("v1.19.0", tmp_path / "adopted-v1.19.0", env))
    published = tmp_path / "published" / "cert-manager"
    shutil.copytree(CHARTS / "v1.19.0", published)
    ns = ("-n", namespace)
    # Not test_cert_manager's release name: its ClusterRoles, named after the release, are
    # cluster-wide and outlive that test in the session's control plane.
    release = "cm-plugin"
    hook = job_runner.expect(namespace, f"{release}-upgrade-guard")
    done = helm("install", release, adopted_old, *ns, *BASE_VALUES, "--set", "crds.enabled=true",
                timeout=300)  # fmt: skip
    assert done.returncode == 0, show(done)
    assert hook.wait(1, timeout=240).succeeded
    store_certificates(cluster, namespace)

    plain = (
        "--reset-values",
        "--set",
        "crds.enabled=true",
        "--set",
        "startupapicheck.enabled=false",
    )
    on_published = guard("upgrade", release, str(published), *ns, *plain)
    on_adopted = guard("upgrade", release, adopted_new, *ns, "--reset-values", *BASE_VALUES,
                       "--set", "crds.enabled=true")  # fmt: skip
    upgraded = helm("upgrade", release, adopted_new, *ns, "--reset-values", *BASE_VALUES,
                    "--set", "crds.enabled=true", timeout=300)  # fmt: skip
    hook_log = hook.wait(2, timeout=240).log
    for title, report in (("helm guard, published chart", on_published.stdout),
                          ("helm guard, adopted chart", on_adopted.stdout),
                          ("the adopted chart's hook (helm upgrade)", hook_log)):  # fmt: skip
        print(f"\n--- {title}\n{report}")
    assert upgraded.returncode != 0, show(upgraded)
    assert on_published.returncode == on_adopted.returncode == 1
    verdict = hook_log.splitlines()[0]
    assert verdict.startswith("upgrade-guard REFUSED: pre-upgrade of 6 CRDs"), hook_log
    assert on_published.stdout.splitlines()[0] == on_adopted.stdout.splitlines()[0] == verdict
    assert f"2 of 2 certificates affected: {namespace}/api, {namespace}/web" in hook_log
    # The hook's log is kept to 4096 bytes (Helm prints it as one line); the plugin's whole.
    shown = findings_of(hook_log)
    assert findings_of(on_published.stdout)[: len(shown)] == shown
    assert findings_of(on_adopted.stdout) == findings_of(on_published.stdout)
    assert "UG606" not in on_published.stdout + on_adopted.stdout + hook_log
    # The adopted chart's acceptances go in its values, as the hook's report says; the
    # published chart's by the plugin's option.
    assert "--accept 'ENTRY'" in printed(on_published.stdout, "each refusal: ")
    command = printed(on_adopted.stdout, "each refusal: ")
    assert command == (f"helm guard upgrade {release} -n {namespace} CHART [your flags]"
                       " --set-json 'upgrade-guard.accept=[ENTRY,...]' --run")  # fmt: skip
    flags = ("--reset-values", *BASE_VALUES, "--set", "crds.enabled=true")
    accepted = shell(typed(command, adopted_new, flags, entries(on_adopted.stdout)))
    assert accepted.returncode == 0, show(accepted)
    passed = hook.wait(3, timeout=240)
    assert passed.succeeded and "ACCEPTED by the cluster admin" in passed.log, passed.log


def test_helm_3s_plugin_format_installs_and_runs_the_same_command(
    cluster: Cluster, tmp_path: Path
) -> None:
    """helm-guard/helm3 (Helm 3's plugin.yaml, which Helm 4 reads too), in a fresh helm home:
    installed and run by helm v4.1.4 (no Helm 3 binary is built here)."""
    env = cluster.env(None)
    for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[var] = str(tmp_path / var.lower())

    def helm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(cluster.binaries.helm), *args], env=env, capture_output=True,
                              text=True, check=False, timeout=120)  # fmt: skip

    done = helm("plugin", "install", str(PLUGIN / "helm3"))
    assert done.returncode == 0, show(done)
    done = helm("guard", "crds", V1)
    assert done.returncode in (0, 1), show(done)
    assert done.stdout.startswith("upgrade-guard "), show(done)
    done = helm("guard", "rollback")
    assert done.returncode == 2 and "helm guard rollback RELEASE [REVISION]" in done.stderr


def test_bad_input_and_an_unreachable_cluster_exit_as_the_hook_does(
    cluster: Cluster, helm: ToolRunner, guard: ToolRunner, tmp_path: Path
) -> None:
    """Helm's own failures keep helm's message: exit 2 for bad input, 3 when helm cannot
    reach the cluster. Each beside the nearest call that gets further."""
    missing = guard("upgrade", "rel", str(tmp_path / "no-such-chart"))
    assert missing.returncode == 2, show(missing)
    assert "Error:" in missing.stderr and "helm upgrade failed" in missing.stderr
    unreachable = tmp_path / "unreachable.yaml"
    unreachable.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))  # fmt: skip
    done = guard("upgrade", "rel", V1, kubeconfig=unreachable)
    assert done.returncode == 3, show(done)
    assert "kubernetes cluster unreachable" in done.stderr, show(done)  # helm's own words
    done = guard("--kube-token", "t", "upgrade", "rel", V1)
    assert done.returncode == 2 and "helm --kube-token" in done.stderr, show(done)
    done = guard("crds", V1, "--run")
    assert done.returncode == 2 and "--run: the crds/ are applied with kubectl" in done.stderr


def test_a_chart_that_cannot_render_with_reused_values_gets_the_flag_that_does(
    namespace: str, helm: ToolRunner, guard: ToolRunner, tmp_path: Path
) -> None:
    """2.0.0 reads a value 1.0.0 never had (b.c, defaulted in 2.0.0's values): with
    --reuse-values helm cannot render it, and no way out of the guard's can help; the plugin
    says so, and the flag it names renders and passes."""
    charts = {}
    for version, values, data in (("1.0.0", "a: 1\n", "{a: '{{ .Values.a }}'}"),
                                  ("2.0.0", "a: 1\nb: {c: 2}\n",
                                   "{a: '{{ .Values.a }}', c: '{{ .Values.b.c }}'}")):  # fmt: skip
        chart = tmp_path / version
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: rc\nversion: {version}\n")
        (chart / "values.yaml").write_text(values)
        (chart / "templates" / "cm.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: rc}}\ndata: {data}\n"
        )
        charts[version] = str(chart)
    assert helm("install", "rc", charts["1.0.0"], "-n", namespace).returncode == 0
    reused = guard("upgrade", "rc", charts["2.0.0"], "-n", namespace, "--reuse-values")
    assert reused.returncode == 2, show(reused)
    assert "nil pointer evaluating" in reused.stderr, show(reused)
    assert (
        "the new chart does not render with the previous release's values kept whole"
        " (--reuse-values); --reset-then-reuse-values takes the new chart's defaults"
    ) in reused.stderr, show(reused)
    reset = guard("upgrade", "rc", charts["2.0.0"], "-n", namespace, "--reset-then-reuse-values")
    assert reset.returncode == 0, show(reset)
