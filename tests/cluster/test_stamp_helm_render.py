"""Stamped annotations survive every render of a templated CRD file: real helm renders the
chart with the guarding conditional true and false."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testenv import Binaries
from upgrade_guard.write import stamper

TEMPLATE = """\
# START crd {{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    # START keep {{- if .Values.crds.keep }}
    helm.sh/resource-policy: keep
    # END keep {{- end }}
  labels:
    app: '{{ .Release.Name }}'
spec:
  group: example.com
# END crd {{- end }}
"""
WANTED = {"upgrade-guard.io/crd-schema-version": "1", "upgrade-guard.io/crd-schema-digest": "x"}


@pytest.mark.parametrize("keep", ["true", "false"])
def test_every_render_carries_the_stamped_annotations(
    testenv_binaries: Binaries, tmp_path: Path, keep: str
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: widgets\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("crds:\n  enabled: true\n  keep: false\n")
    stamped = stamper.stamp_text(TEMPLATE, {"widgets.example.com": WANTED}, "crds.yaml")
    (chart / "templates" / "crds.yaml").write_text(stamped)
    rendered = subprocess.run(
        [str(testenv_binaries.helm), "template", "rel", str(chart), "--set", f"crds.keep={keep}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    documents = [d for d in yaml.safe_load_all(rendered) if d]
    annotations = documents[0]["metadata"]["annotations"]
    assert {k: annotations[k] for k in WANTED} == WANTED
    assert ("helm.sh/resource-policy" in annotations) is (keep == "true")


SHARED_CHARTS = Path(__file__).resolve().parents[2].parent / "shared" / "charts"
EXTERNAL_SECRETS = SHARED_CHARTS / "external-secrets" / "0.16.0"
STAMPED = {"upgrade-guard.io/crd-schema-version": "2"}


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([], id="defaults"),
        pytest.param(
            ["--set", "crds.conversion.enabled=true",
             "--set-json", 'crds.annotations={"team":"secrets"}'],
            id="conversion-and-extra-annotations",
        ),
    ],
)  # fmt: skip
def test_stamp_on_a_real_templated_chart_renders_on_every_crd(
    testenv_binaries: Binaries, tmp_path: Path, values: list[str]
) -> None:
    """Issue 34 §7: external-secrets' CRD templates (bare {{- if }} lines, a {{- with }}
    block and a conditional inside metadata.annotations, actions within values) were refused
    by stamp (exit 2). Stamped in a copy, every CRD the chart renders carries the
    annotations, whatever the values, and the other templates are left byte for byte."""
    if not EXTERNAL_SECRETS.is_dir():
        pytest.skip(f"the shared charts are not at {SHARED_CHARTS}")
    chart = tmp_path / "external-secrets"
    shutil.copytree(EXTERNAL_SECRETS, chart)
    stamped = subprocess.run(
        [str(Path(sys.executable).with_name("upgrade-guard")), "stamp",
         str(chart / "templates"), "--schema-version", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert stamped.returncode == 0, stamped.stdout + stamped.stderr
    for source in (EXTERNAL_SECRETS / "templates").rglob("*"):
        if source.is_file() and "crds" not in source.parts:
            copy = chart / source.relative_to(EXTERNAL_SECRETS)
            assert copy.read_bytes() == source.read_bytes(), source
    rendered = subprocess.run(
        [str(testenv_binaries.helm), "template", "rel", str(chart), *values],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    crds = [
        d for d in yaml.safe_load_all(rendered) if d and d.get("kind") == "CustomResourceDefinition"
    ]
    assert len(crds) == 20
    for crd in crds:
        annotations = crd["metadata"]["annotations"]
        assert {k: annotations.get(k) for k in STAMPED} == STAMPED, crd["metadata"]["name"]
        assert annotations["upgrade-guard.io/crd-schema-digest"].startswith("sha256:")
        if values:
            assert annotations["team"] == "secrets"
            assert crd["spec"]["conversion"]["strategy"] == "Webhook"
