"""--output github places each finding at the line of its schema node in the new CRD file,
so the annotation lands on the pull request's diff."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

OLD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  scope: Namespaced
  versions:
    - name: v1alpha1
      served: true
      storage: false
      schema:
        openAPIV3Schema: {type: object}
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                legacy: {type: string}
                mode:
                  type: string
                  enum: [a, b]
                "odd.name":
                  type: integer
"""
NEW = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                mode:
                  type: string
                  enum: [a]
                "odd.name":
                  type: integer
                  maximum: 3
"""


def annotations(tmp_path: Path, *extra: str, stdin: str | None = None) -> dict[str, str]:
    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    result = subprocess.run(
        [sys.executable, "-m", "upgrade_guard", "diff", "old.yaml", *extra, "--output", "github"],
        cwd=tmp_path,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    found = {}
    for line in result.stdout.splitlines():
        match = re.match(r"::\w+ (.*?)title=(UG\d+)", line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def test_each_finding_points_at_its_node_in_the_new_file(tmp_path: Path) -> None:
    assert annotations(tmp_path, "new.yaml") == {
        "UG105": "file=new.yaml,line=4,",  # removed version, not in the file: the CRD's name
        "UG107": "file=new.yaml,line=4,",  # CRD level: metadata.name
        "UG201": "file=new.yaml,line=19,",  # a removed property: its parent's properties
        "UG207": "file=new.yaml,line=20,",  # spec.mode
        "UG208": "file=new.yaml,line=23,",  # spec["odd.name"], a quoted property name
    }


def test_standard_input_has_no_file_to_point_at(tmp_path: Path) -> None:
    assert set(annotations(tmp_path, "-", stdin=NEW).values()) == {""}
