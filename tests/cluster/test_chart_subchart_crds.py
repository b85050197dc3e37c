"""CRDs in a subchart: an operator chart shaped as large operator charts ship (a `crds`
subchart the parent switches with `condition: crds.enabled`), adopted by exactly the blocks
of docs/chart-adoption.md's "CRDs in a subchart" (read from the page), its crd-templates
naming the subchart's templates. Rendered with the real helm; installed and upgraded against
the real apiserver, the guard's Job run from the real image."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from test_cert_manager import CRDS, GUARD_VALUES, LIBRARY, adoption_steps, apply_step, crd, tool_env
from test_chart_snippets import delete_crd_on_purpose, guard_inputs

from testenv import Cluster, Image, JobRunner, ToolRunner, wait_for

SECTION = "CRDs in a subchart"
GROUP = "stack.example.io"
CRD_NAMES = [f"backups.{GROUP}", f"restores.{GROUP}"]
KEEP = "  {{- if .Values.keep }}\n  annotations:\n    helm.sh/resource-policy: keep\n  {{- end }}\n"


def crd_template(kind: str, required: list[str], switch: str | None) -> str:
    """A CRD template of the subchart: `helm.sh/resource-policy: keep` unless the subchart's
    `keep` is off, the whole CRD behind SWITCH (a subchart value) when given."""
    plural = f"{kind.lower()}s"
    properties = {"schedule": {"type": "string"}, "target": {"type": "string"}}
    spec = {"type": "object", "required": required, "properties": properties}
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}
    names = {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": names,
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }
    name = f"  name: {plural}.{GROUP}\n"
    text = yaml.safe_dump(crd, sort_keys=False).replace(name, name + KEEP, 1)
    return text if switch is None else f"{{{{- if {switch} }}}}\n{text}{{{{- end }}}}\n"


def operator_chart(version: str, chart: Path) -> Path:
    """backup-operator VERSION before adoption: a Deployment, and its CRDs in the subchart
    charts/crds, which the parent switches with crds.enabled. 2.0.0 makes a Backup's
    spec.target required."""
    required = ["schedule", "target"] if version == "2.0.0" else ["schedule"]
    files = {
        "Chart.yaml": {"apiVersion": "v2", "name": "backup-operator", "version": version,
                       "appVersion": version, "dependencies": [
                           {"name": "crds", "version": version, "condition": "crds.enabled"}]},
        "values.yaml": {"crds": {"enabled": True},
                        "image": {"repository": "example.com/backup-operator", "tag": ""}},
        "charts/crds/Chart.yaml": {"apiVersion": "v2", "name": "crds", "version": version},
        "charts/crds/values.yaml": {"keep": True, "restores": {"enabled": True}},
    }  # fmt: skip
    for name, content in files.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(yaml.safe_dump(content, sort_keys=False))
    (chart / "templates").mkdir()
    (chart / "templates" / "_helpers.tpl").write_text(
        '{{- define "backup-operator.image" -}}\n'
        "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\n"
        "{{- end -}}\n"
    )
    (chart / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
        "spec:\n  selector: {matchLabels: {app: backup-operator}}\n  template:\n"
        "    metadata: {labels: {app: backup-operator}}\n    spec:\n      containers:\n"
        '        - name: controller\n          image: {{ include "backup-operator.image" . }}\n'
    )
    templates = chart / "charts" / "crds" / "templates"
    templates.mkdir()
    (templates / "backups.yaml").write_text(crd_template("Backup", required, None))
    (templates / "restores.yaml").write_text(
        crd_template("Restore", ["target"], ".Values.restores.enabled")
    )
    return chart


def adopt(version: str, workdir: Path, env: dict[str, str]) -> Path:
    """backup-operator VERSION with the guard adopted by the page's blocks, the library
    beside it where the page's `file://../upgrade-guard` finds it."""
    chart = operator_chart(version, workdir / "backup-operator")
    shutil.copytree(LIBRARY, workdir / "upgrade-guard")
    for language, body in adoption_steps(SECTION):
        apply_step(chart, language, body, env)
    return chart


@pytest.fixture(scope="module")
def adopted(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both releases, adopted from the page."""
    env = tool_env(cluster)
    return {v: adopt(v, tmp_path_factory.mktemp(v), env) for v in ("1.0.0", "2.0.0")}


TEMPLATES = "upgrade-guard.io/crd-templates"
NO_SUBCHART = (
    "Chart.yaml's upgrade-guard.io/crd-templates names charts/crd/templates/backups.yaml, but"
    " backup-operator has no subchart crd these values enable, nor a values table crd"
)


@pytest.mark.parametrize(
    ("annotations", "values", "rendered", "message"),
    [
        pytest.param({}, (), CRD_NAMES, None, id="the page's: in the subchart's scope"),
        pytest.param({}, ("--set", "crds.restores.enabled=false"), CRD_NAMES[:1], None,
                     id="a switch of the subchart's values"),
        pytest.param({}, ("--set", "crds.enabled=false"), [], None,
                     id="the subchart switched off"),
        pytest.param({"upgrade-guard.io/crds": CRD_NAMES[0]}, (), None,
                     "charts/crds/templates/restores.yaml renders the CRD restores.stack."
                     "example.io, which Chart.yaml's upgrade-guard.io/crds does not list",
                     id="a CRD not listed"),
        pytest.param({TEMPLATES: "charts/crds/templates/backup.yaml"}, (), None,
                     "names charts/crds/templates/backup.yaml, but backup-operator's subchart"
                     " crds has no template templates/backup.yaml", id="no such template"),
        pytest.param({TEMPLATES: "charts/crds/templates/backup.yaml"},
                     ("--set", "crds.enabled=false"), [], None,
                     id="no such template, the subchart off: cannot tell"),
        pytest.param({TEMPLATES: "charts/crd/templates/backups.yaml"}, (), None, NO_SUBCHART,
                     id="no such subchart"),
        pytest.param({TEMPLATES: "charts/crd/templates/backups.yaml"},
                     ("--set", "crds.enabled=false"), None, NO_SUBCHART,
                     id="no such subchart, the subchart off"),
        pytest.param({TEMPLATES: "charts/crds/templates/_helpers.tpl"}, (), None,
                     "names charts/crds/templates/_helpers.tpl, a partial", id="a partial"),
        pytest.param({TEMPLATES: "crds/backups.yaml"}, (), None, "names crds/backups.yaml, but"
                     " backup-operator has no template templates/crds/backups.yaml",
                     id="a path under the parent's templates/"),
    ],
)  # fmt: skip
def test_subchart_crd_templates_render_in_the_subchart_scope(
    helm: ToolRunner, adopted: dict[str, Path], tmp_path: Path, annotations: dict[str, str],
    values: tuple[str, ...], rendered: list[str] | None, message: str | None,
) -> None:  # fmt: skip
    """charts/SUBCHART/templates/FILE renders FILE as Helm renders the subchart (its
    values: crds.restores.enabled is the subchart's .Values.restores.enabled); a subchart
    its condition switches off renders nothing; a name that is no template of an enabled
    subchart, or no subchart and no values table, fails the render. `annotations`: edits of
    the page's Chart.yaml; `rendered`: the library's rendered-crds.txt."""
    chart = tmp_path / "backup-operator"
    shutil.copytree(adopted["1.0.0"], chart)
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    metadata["annotations"].update(annotations)
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))
    data = guard_inputs(helm, chart, values, message)
    if data is not None:
        assert data["rendered-crds.txt"] == "\n".join(rendered or [])


def test_a_chart_with_its_crds_in_a_subchart_adopted_from_the_docs(
    cluster: Cluster, namespace: str, helm: ToolRunner, job_runner: JobRunner,
    guard_image: Image, adopted: dict[str, Path],
) -> None:  # fmt: skip
    for name in CRD_NAMES:  # cluster-wide: kept (resource-policy) by an earlier run
        delete_crd_on_purpose(cluster, f"{CRDS}/{name}")
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    runs = 0

    def run(version: str, *values: str, command: str = "upgrade") -> tuple[int, str, str]:
        """(helm's exit code, the guard's log, helm's stderr)."""
        nonlocal runs
        result = helm(command, "rel", str(adopted[version]), "-n", namespace, *GUARD_VALUES,
                      *values, timeout=300)  # fmt: skip
        runs += 1
        log = guard.wait(runs, timeout=240).log
        print(f"$ helm {command} rel backup-operator-{version} {' '.join(values)}\n"
              f"  exit {result.returncode}: {log.splitlines()[0] if log else ''}")  # fmt: skip
        return result.returncode, log, result.stderr

    # Install: the guard passes, judging the subchart's CRDs; Helm applies them.
    code, log, err = run("1.0.0", command="install")
    assert code == 0, log + err
    assert log.startswith("upgrade-guard SAFE: pre-install of 2 CRDs"), log
    assert all(crd(cluster, name) for name in CRD_NAMES)
    backups = f"/apis/{GROUP}/v1/namespaces/{namespace}/backups"
    wait_for(lambda: cluster.admin.get_or_none(backups) is not None, timeout=30,
             what="backups served")  # fmt: skip
    cluster.admin.create(backups, {"apiVersion": f"{GROUP}/v1", "kind": "Backup",
                                   "metadata": {"name": "nightly"},
                                   "spec": {"schedule": "0 3 * * *"}})  # fmt: skip

    # 2.0.0's subchart makes spec.target required, and the stored Backup has none: refused
    # in helm's own output, the live CRD left as it was.
    code, log, err = run("2.0.0")
    assert code != 0 and log.startswith("upgrade-guard REFUSED: pre-upgrade of 2 CRDs"), log
    assert "UG202" in err and "spec.target" in err and f"{namespace}/nightly" in err, err
    live = crd(cluster, CRD_NAMES[0])["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert live["properties"]["spec"]["required"] == ["schedule"]

    # The Backup given a target: the same upgrade passes and Helm applies the change.
    cluster.admin.patch(f"{backups}/nightly", {"spec": {"target": "s3://backups"}})
    code, log, err = run("2.0.0")
    assert code == 0 and log.startswith("upgrade-guard SAFE: pre-upgrade of 2 CRDs"), log + err
    live = crd(cluster, CRD_NAMES[0])["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert live["properties"]["spec"]["required"] == ["schedule", "target"]

    # The subchart switched off, its CRDs kept (helm.sh/resource-policy: keep, the
    # subchart's default): the release applies none, the hook judges none, Helm keeps them.
    code, log, err = run("2.0.0", "--set", "crds.enabled=false")
    assert code == 0 and log.startswith("upgrade-guard SAFE: pre-upgrade of 0 CRDs"), log + err
    assert all(crd(cluster, name) for name in CRD_NAMES)

    # Applied again without the keep policy, then switched off: Helm would delete both CRDs
    # and the stored Backup with them: refused, naming it.
    code, log, err = run("2.0.0", "--set", "crds.keep=false")
    assert code == 0 and log.startswith("upgrade-guard SAFE: pre-upgrade of 2 CRDs"), log + err
    annotations = crd(cluster, CRD_NAMES[0])["metadata"]["annotations"]
    assert "helm.sh/resource-policy" not in annotations, annotations
    code, log, err = run("2.0.0", "--set", "crds.enabled=false", "--set", "crds.keep=false")
    assert code != 0 and log.startswith("upgrade-guard REFUSED: pre-upgrade of 0 CRDs"), log
    assert f"UG608 crd-deleted {CRD_NAMES[0]}" in err, err
    assert f"UG608 crd-deleted {CRD_NAMES[1]}" in err, err
    assert f"the 1 object(s) stored in it ({namespace}/nightly)" in err, err
    assert all(crd(cluster, name) for name in CRD_NAMES)
