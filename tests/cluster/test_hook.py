"""`upgrade-guard hook` against the real apiserver, each run with the chart snippet's rules
and no more: `get` on the chart's CRDs by name and, where a test names them, `list` on
resources. The chart also lists its CRDs' objects for evidence (test_hook_evidence.py runs
with that); without `list` these verdicts are the schema's alone. Each refusal sits beside
the nearest change that passes."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from testenv import JSON, Cluster, CRDTrial, TcpProxy

UPGRADE_GUARD = str(Path(sys.executable).with_name("upgrade-guard"))
CRD_RESOURCE = {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"]}


def widget_crd(group: str, fields: JSON, *, versions: tuple[str, ...] = ("v1",),
               storage: str | None = None, required: list[str] | None = None,
               annotations: dict[str, str] | None = None) -> JSON:  # fmt: skip
    """widgets.<group> with spec.<fields> in every version, and a free-form status."""
    spec: JSON = {"type": "object", "properties": copy.deepcopy(fields)}
    if required:
        spec["required"] = required
    schema = {
        "type": "object",
        "properties": {
            "spec": spec,
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    metadata: JSON = {"name": f"widgets.{group}"}
    if annotations:
        metadata["annotations"] = {f"upgrade-guard.io/{k}": v for k, v in annotations.items()}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == (storage or versions[-1]),
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                    "subresources": {"status": {}},
                }
                for v in versions
            ],
        },
    }


def new_group() -> str:
    return f"g{secrets.token_hex(4)}.hook.upgrade-guard.dev"


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str
    termination: str
    seconds: float

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"

    def codes(self, refusing_only: bool = True) -> set[str]:
        report = self.stdout.splitlines()[1:]
        wanted = ("error ",) if refusing_only else ("error ", "warning ", "info ", "excused ")
        return {line.split()[1] for line in report if line.startswith(wanted)}


def run_hook(kubeconfig: Path, crds: list[JSON], tmp_path: Path, *args: str,
             bundle: bool = False, timeout: float = 120) -> HookRun:  # fmt: skip
    chart = tmp_path / f"chart-{secrets.token_hex(3)}"
    chart.mkdir()
    if bundle:
        source = chart / "crds.json.gz"
        items = {"apiVersion": "v1", "kind": "List", "items": crds}
        source.write_bytes(gzip.compress(json.dumps(items).encode()))
    else:
        source = chart / "crds"
        source.mkdir()
        for body in crds:
            (source / f"{body['metadata']['name']}.yaml").write_text(yaml.safe_dump(body))
    termination = chart / "termination-log"
    started = time.monotonic()
    done = subprocess.run(
        [UPGRADE_GUARD, "hook", "--crds", str(source), "--kubeconfig", str(kubeconfig),
         "--termination-log", str(termination), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    text = termination.read_text() if termination.exists() else ""
    return HookRun(done.returncode, done.stdout, done.stderr, text, seconds)


def guard_account(cluster: Cluster, namespace: str, crds: list[JSON],
                  listed: tuple[str, ...] = ()) -> Path:  # fmt: skip
    """The chart snippet's rules: get on these CRDs by name; list on the listed resources."""
    rules: list[JSON] = [
        {**CRD_RESOURCE, "verbs": ["get"], "resourceNames": [c["metadata"]["name"] for c in crds]}
    ]
    for resource in listed:
        plural, _, group = resource.partition(".")
        rules.append({"apiGroups": [group], "resources": [plural], "verbs": ["list"]})
    return cluster.make_service_account(namespace, cluster_rules=rules)


def apply(cluster: Cluster, *crds: JSON) -> None:
    for body in crds:
        CRDTrial(cluster.admin).apply_crd(body).expect_allowed()


STRING = {"type": "string"}
CASES = [
    # (id, live spec fields, chart spec fields, extra chart keywords, the guard may list the
    #  stored widgets, exit, refusing codes)
    ("field added", {"a": STRING}, {"a": STRING, "b": STRING}, {}, False, 0, set()),
    ("field removed: pruned", {"a": STRING, "b": STRING}, {"a": STRING}, {}, False, 1, {"UG201"}),
    ("required with a default", {"a": STRING}, {"a": {**STRING, "default": "x"}},
     {"required": ["a"]}, False, 1, {"UG212"}),
    ("required without a default", {"a": STRING}, {"a": STRING}, {"required": ["a"]},
     False, 1, {"UG202"}),
    ("type changed", {"a": STRING}, {"a": {"type": "integer"}}, {}, False, 1, {"UG204"}),
    ("enum restricted: ratcheted on 1.35, no stored widget", {"a": STRING},
     {"a": {**STRING, "enum": ["x"]}}, {}, True, 0, set()),
    ("enum restricted: ratcheted on 1.35, stored widgets unread", {"a": STRING},
     {"a": {**STRING, "enum": ["x"]}}, {}, False, 1, {"UG207"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("live_fields", "chart_fields", "extra", "may_list", "exit_code", "codes"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_schema_changes(cluster: Cluster, namespace: str, tmp_path: Path, live_fields: JSON,
                        chart_fields: JSON, extra: JSON, may_list: bool, exit_code: int,
                        codes: set[str]) -> None:  # fmt: skip
    group = new_group()
    apply(cluster, widget_crd(group, live_fields))
    chart = widget_crd(group, chart_fields, **extra)
    listed = (f"widgets.{group}",) if may_list else ()
    run = run_hook(guard_account(cluster, namespace, [chart], listed), [chart], tmp_path)
    assert run.code == exit_code, run
    assert run.codes() == codes, run
    verdict = "REFUSED" if exit_code else "SAFE"
    assert run.stdout.startswith(f"upgrade-guard {verdict}: pre-upgrade of 1 CRD"), run
    assert run.termination.startswith(f"upgrade-guard {verdict}"), run


def test_a_new_crd_and_an_unchanged_one(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    group = new_group()
    applied = widget_crd(group, {"a": STRING})
    apply(cluster, applied)
    fresh = widget_crd(new_group(), {"a": STRING})
    run = run_hook(guard_account(cluster, namespace, [applied, fresh]), [applied, fresh],
                   tmp_path, bundle=True)  # fmt: skip
    assert run.code == 0, run
    assert "nothing left to guard for these CRDs" in run.stdout, run
    assert "read 1 live of 2 chart CRDs" in run.stdout, run


def test_a_declared_break_of_an_applied_release_does_not_block_the_next_upgrade(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """The break that let spec.a become required is idle once the live CRD equals the chart
    (an upgrade that changes a value only, a rollback to the deployed revision): SAFE. Beside
    it, a chart that changes the CRD otherwise: the break matches nothing and is refused."""
    group = new_group()
    chart = widget_crd(group, {"a": STRING}, required=["a"])
    apply(cluster, chart)
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"declared-breaks": [
        {"crd": f"widgets.{group}", "rule": "required-added", "version": "v1",
         "path": "spec.a", "reason": "every widget has had an a since 1.0"}]}))  # fmt: skip
    account = guard_account(cluster, namespace, [chart])
    same = run_hook(account, [chart], tmp_path, "--policy", str(policy))
    assert same.code == 0, same
    changed = widget_crd(group, {"a": STRING, "b": STRING}, required=["a", "b"])
    other = run_hook(account, [changed], tmp_path, "--policy", str(policy))
    assert other.code == 1 and other.codes() == {"UG202", "UG902"}, other


def test_stored_version_dropped(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    group = new_group()
    apply(cluster, widget_crd(group, {"a": STRING}, versions=("v1alpha1",)))
    apply(cluster, widget_crd(group, {"a": STRING}, versions=("v1alpha1", "v1")))
    kept = widget_crd(group, {"a": STRING}, versions=("v1alpha1", "v1"))
    dropped = widget_crd(group, {"a": STRING}, versions=("v1",))
    account = guard_account(cluster, namespace, [kept])
    run = run_hook(account, [dropped], tmp_path)
    assert run.code == 1 and "UG104" in run.codes(), run
    assert "now: migrate storage: rewrite every object" in run.stdout, run
    assert "UG104" not in run_hook(account, [kept], tmp_path).codes(), run


def test_schema_rollback(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    group = new_group()
    newer = widget_crd(group, {"a": STRING, "b": STRING}, annotations={"crd-schema-version": "2"})
    older = widget_crd(group, {"a": STRING}, annotations={"crd-schema-version": "1"})
    apply(cluster, newer)
    account = guard_account(cluster, namespace, [newer])
    run = run_hook(account, [older], tmp_path, "--phase", "pre-rollback")
    assert run.code == 1 and {"UG603", "UG201"} <= run.codes(), run
    assert run.stdout.startswith("upgrade-guard REFUSED: pre-rollback"), run
    assert run_hook(account, [newer], tmp_path).code == 0


def test_a_declared_break_of_another_release_is_noted(cluster: Cluster, namespace: str,
                                                      tmp_path: Path) -> None:  # fmt: skip
    """A break declared with the schema version it ships with excuses the release that
    crosses it; in any other release the refusal says why the break did not apply."""
    group = new_group()
    live = widget_crd(group, {"a": STRING, "b": STRING}, annotations={"crd-schema-version": "1"})
    chart = widget_crd(group, {"a": STRING}, annotations={"crd-schema-version": "2"})
    apply(cluster, live)
    account = guard_account(cluster, namespace, [chart])

    def declared(schema_version: int) -> str:
        policy = tmp_path / f"policy-{schema_version}.yaml"
        entry = {"crd": f"widgets.{group}", "rule": "property-removed", "path": "spec.b",
                 "schema-version": schema_version, "reason": "b was never read"}  # fmt: skip
        policy.write_text(yaml.safe_dump({"declared-breaks": [entry]}))
        return str(policy)

    shipped = run_hook(account, [chart], tmp_path, "--policy", declared(2))
    assert shipped.code == 0 and "excused UG201" in shipped.stdout, shipped
    other = run_hook(account, [chart], tmp_path, "--policy", declared(3))
    assert other.code == 1 and other.codes() == {"UG201"}, other
    assert (
        f"declared break UG201 on widgets.{group} at spec.b (schema version 3) not applied:"
        " this release goes from schema version 1 to 2"
    ) in other.stdout, other
    assert "UG902" not in other.stdout, other


def test_chart_and_image_must_belong_together(cluster: Cluster, namespace: str,
                                              tmp_path: Path) -> None:  # fmt: skip
    """Checked before the cluster is read: an account without any permission still gets the
    pairing answer, and gets exit 3 only once the pairing holds."""
    table = tmp_path / "images.yaml"
    table.write_text(
        yaml.safe_dump(
            {
                "images": {
                    "1.0.0": {"controller-state-version": 2},
                    "2.0.0": {"controller-state-version": 3},
                }
            }
        )
    )
    chart = widget_crd(new_group(), {"a": STRING})
    nobody = cluster.make_service_account(namespace)
    args = ("--counter", "controller-state-version=3", "--image-table", str(table))
    stale = run_hook(nobody, [chart], tmp_path, *args, "--controller-image", "ex/op:1.0.0")
    assert stale.code == 1 and stale.codes() == {"UG602"}, stale
    assert "this chart goes with image 2.0.0" in stale.stdout, stale
    unknown = run_hook(nobody, [chart], tmp_path, *args, "--controller-image", "ex/op:dev")
    assert unknown.code == 1 and unknown.codes() == {"UG601"}, unknown
    paired = run_hook(nobody, [chart], tmp_path, *args, "--controller-image", "ex/op:2.0.0")
    assert paired.code == 3, paired


def test_a_stale_image_hides_no_other_refusal(cluster: Cluster, namespace: str,
                                              tmp_path: Path) -> None:  # fmt: skip
    """Every check runs in one pass: the image refusal and the schema's are reported together."""
    table = tmp_path / "images.yaml"
    table.write_text(yaml.safe_dump({"images": {"1.0.0": {"controller-state-version": 2}}}))
    group = new_group()
    apply(cluster, widget_crd(group, {"a": STRING, "b": STRING}))
    chart = widget_crd(group, {"a": STRING})
    account = guard_account(cluster, namespace, [chart])
    run = run_hook(account, [chart], tmp_path, "--counter", "controller-state-version=3",
                   "--image-table", str(table), "--controller-image", "ex/op:1.0.0")  # fmt: skip
    assert run.code == 1 and run.codes() == {"UG602", "UG201"}, run
    assert "read 1 live of 1 chart CRDs" in run.stdout, run


def test_state_newer_than_the_release_reads(cluster: Cluster, namespace: str,
                                             tmp_path: Path) -> None:  # fmt: skip
    group = new_group()
    crd = widget_crd(group, {"a": STRING}, annotations={"controller-state-version": "3"})
    apply(cluster, crd)
    trial = CRDTrial(cluster.admin, namespace)
    trial.crd = cluster.admin.get(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
    )
    for name, state in (("old", 3), ("new", 5)):
        trial.create({"metadata": {"name": name}, "spec": {"a": "x"}}).expect_allowed()
        trial.update(name, lambda o, s=state: o.update(status={"stateVersion": s}),
                     subresource="status").expect_allowed()  # fmt: skip
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(
        {"stored-state": [{"resource": f"widgets.{group}", "path": "status.stateVersion"}]}
    ))  # fmt: skip
    account = guard_account(cluster, namespace, [crd], listed=(f"widgets.{group}",))
    at = ("--policy", str(policy), "--counter")
    on_crd = run_hook(account, [crd], tmp_path, *at, "controller-state-version=2")
    assert on_crd.code == 1 and on_crd.codes() == {"UG605"}, on_crd
    assert f"CRD widgets.{group}" in on_crd.stdout and f"{namespace}/new" in on_crd.stdout
    in_object = run_hook(account, [crd], tmp_path, *at, "controller-state-version=4")
    assert in_object.code == 1 and in_object.codes() == {"UG605"}, in_object
    assert f"{namespace}/new" in in_object.stdout and f"{namespace}/old" not in in_object.stdout
    assert "x" not in {w.strip(":(),") for w in in_object.stdout.split()}  # no object values
    current = run_hook(account, [crd], tmp_path, *at, "controller-state-version=5")
    assert current.code == 0, current


def test_a_missing_permission_names_verb_and_resource(cluster: Cluster, namespace: str,
                                                      tmp_path: Path) -> None:  # fmt: skip
    group = new_group()
    crd = widget_crd(group, {"a": STRING})
    apply(cluster, crd)
    other = widget_crd(new_group(), {"a": STRING})
    run = run_hook(guard_account(cluster, namespace, [crd]), [crd, other], tmp_path)
    assert run.code == 3, run
    assert "forbidden" in run.stderr and "get customresourcedefinitions.apiextensions.k8s.io" \
        f" '{other['metadata']['name']}'" in run.stderr, run  # fmt: skip
    assert run.termination.startswith("upgrade-guard CANNOT DECIDE (exit 3)"), run
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(
        {"stored-state": [{"resource": f"widgets.{group}", "path": "status.v"}]}
    ))  # fmt: skip
    run = run_hook(guard_account(cluster, namespace, [crd]), [crd], tmp_path, "--policy",
                   str(policy))  # fmt: skip
    assert run.code == 3 and f"list widgets.{group}" in run.stderr, run
    assert "Traceback" not in run.stderr


def _through(proxy: TcpProxy, kubeconfig: Path, tmp_path: Path) -> Path:
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
    path = tmp_path / f"proxied-{proxy.port}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("how", ["cut mid-run", "hangs"])
def test_an_apiserver_gone_mid_run_exits_3_within_the_deadline(
    cluster: Cluster, namespace: str, tmp_path: Path, how: str
) -> None:
    crd = widget_crd(new_group(), {"a": STRING})
    host, port = cluster.control_plane.server.removeprefix("https://").rsplit(":", 1)
    proxy = TcpProxy((host, int(port)), hold=how == "hangs")
    kubeconfig = _through(proxy, guard_account(cluster, namespace, [crd]), tmp_path)
    chart = tmp_path / "chart.yaml"
    chart.write_text(yaml.safe_dump(crd))
    process = subprocess.Popen(
        [UPGRADE_GUARD, "hook", "--crds", str(chart), "--kubeconfig", str(kubeconfig),
         "--timeout", "6"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    if how == "cut mid-run":
        assert proxy.connected.wait(30)
        proxy.cut()
    # No wall-clock assert (a loaded host makes them flaky): the guard says it gave up at
    # its deadline, and a guard that hung past it would trip communicate's timeout.
    stdout, stderr = process.communicate(timeout=60)
    proxy.cut()
    assert process.returncode == 3, stdout + stderr
    assert "gave up at the deadline" in stderr, stderr


def test_fail_open_lets_an_undecided_upgrade_through_loudly(cluster: Cluster, namespace: str,
                                                            tmp_path: Path) -> None:  # fmt: skip
    crd = widget_crd(new_group(), {"a": STRING})
    nobody = cluster.make_service_account(namespace)
    closed = run_hook(nobody, [crd], tmp_path)
    assert closed.code == 3, closed
    opened = run_hook(nobody, [crd], tmp_path, "--fail-open")
    assert opened.code == 0, opened
    assert opened.stdout.startswith("upgrade-guard FAILED OPEN"), opened
    assert "UNCHECKED" in opened.stderr and "UNCHECKED" in opened.termination
    group = new_group()
    apply(cluster, widget_crd(group, {"a": STRING, "b": STRING}))
    refusing = widget_crd(group, {"a": STRING})
    account = guard_account(cluster, namespace, [refusing])
    assert run_hook(account, [refusing], tmp_path, "--fail-open").code == 1  # never past a no


def test_pre_install_checks_crds_already_present(cluster: Cluster, namespace: str,
                                                 tmp_path: Path) -> None:  # fmt: skip
    """A manual apply or another release put the CRD there: an install is judged as well."""
    group = new_group()
    apply(cluster, widget_crd(group, {"a": STRING, "b": STRING}))
    chart = widget_crd(group, {"a": STRING})
    run = run_hook(guard_account(cluster, namespace, [chart]), [chart], tmp_path,
                   "--phase", "pre-install")  # fmt: skip
    assert run.code == 1 and run.codes() == {"UG201"}, run
    assert run.stdout.startswith("upgrade-guard REFUSED: pre-install of 1 CRD"), run


def release_record(namespace: str, revision: int, status: str, crds: list[JSON]) -> JSON:
    """A Secret as Helm 4's default driver stores a release record (its own base64 of the
    gzipped JSON), applying these CRDs."""
    manifest = "".join(f"---\n# Source: c/templates/crds.yaml\n{json.dumps(c)}\n" for c in crds)
    chart = {"metadata": {"name": "c", "version": f"{revision}.0.0"}}
    body = {"name": "rel", "version": revision, "info": {"status": status}, "manifest": manifest,
            "chart": chart, "hooks": []}  # fmt: skip
    helm = base64.b64encode(gzip.compress(json.dumps(body).encode())).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.rel.v{revision}", "namespace": namespace,
                         "labels": {"owner": "helm", "name": "rel"}},
            "data": {"release": base64.b64encode(helm.encode()).decode()}}  # fmt: skip


def run_release_hook(kubeconfig: Path, namespace: str, names: list[str],
                     tmp_path: Path) -> HookRun:  # fmt: skip
    """The hook as the library runs it under Helm, for release `rel` rendered at revision 2,
    allowed to read the CRDs ``names``."""
    crd_names = tmp_path / "crd-names"
    crd_names.write_text("\n".join(names) + "\n")
    done = subprocess.run(
        [UPGRADE_GUARD, "hook", "--release", "rel", "--namespace", namespace, "--revision", "2",
         "--crd-names", str(crd_names), "--kubeconfig", str(kubeconfig),
         "--termination-log", str(tmp_path / "termination-log")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return HookRun(done.returncode, done.stdout, done.stderr, "", 0)


DROPPED_READS = [
    # (id, the dropped CRD listed in Chart.yaml, its objects listable, what UG608 says of them)
    ("listed", True, True, "the 1 object(s) stored in it ({ns}/w)"),
    ("unlisted", False, False, "which the guard could not count: this release's guard may not"
     " read the CRD, which Chart.yaml's upgrade-guard.io/crds does not list"),
    ("listed, no list right", True, False, "which the guard could not count: forbidden: the"
     " credentials may not list widgets.{group}; grant `list` on widgets.{group}"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("listed", "listable", "said"),
    [c[1:] for c in DROPPED_READS],
    ids=[c[0] for c in DROPPED_READS],
)
def test_a_crd_the_release_stops_applying_is_judged_whatever_the_guard_may_read(
    cluster: Cluster, namespace: str, tmp_path: Path, listed: bool, listable: bool, said: str
) -> None:
    """Helm deletes a CRD the replaced release applied and this one does not. The hook counts
    its objects where it may; where it may not read the CRD (a rollback to a chart older than
    the CRD does not list it) or list its objects, it refuses all the same, saying why they
    were not counted: never bad input (Helm would leave a rollback pending), never a pass."""
    kept, dropped = widget_crd(new_group(), {"a": STRING}), widget_crd(new_group(), {"a": STRING})
    apply(cluster, kept, dropped)
    from test_hook_evidence import store

    store(cluster, namespace, dropped, {"w": {"a": "x"}})
    for revision, status, crds in (
        (1, "deployed", [kept, dropped]),
        (2, "pending-upgrade", [kept]),
    ):
        cluster.admin.create(
            f"/api/v1/namespaces/{namespace}/secrets",
            release_record(namespace, revision, status, crds),
        )
    names = [c["metadata"]["name"] for c in ([kept, dropped] if listed else [kept])]
    records = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
               "resourceNames": [f"sh.helm.release.v1.rel.v{n}" for n in range(1, 34)]}  # fmt: skip
    account = cluster.make_service_account(
        namespace, [records],
        cluster_rules=[{**CRD_RESOURCE, "verbs": ["get"], "resourceNames": names},
                       *({"apiGroups": [c["spec"]["group"]], "resources": ["widgets"],
                          "verbs": ["list"]} for c in ([kept, dropped] if listable else [kept]))],
    )  # fmt: skip
    run = run_release_hook(account, namespace, names, tmp_path)
    assert run.code == 1 and run.codes() == {"UG608"}, run
    assert dropped["metadata"]["name"] in run.stdout, run
    said = said.format(ns=namespace, group=dropped["spec"]["group"])
    assert said in " ".join(run.stdout.split()), run
    assert "Traceback" not in run.stderr, run
