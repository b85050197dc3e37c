"""Stamped annotations survive every render of a templated CRD file: real helm renders the
chart with the guarding conditional true and false."""

from __future__ import annotations

import subprocess
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
