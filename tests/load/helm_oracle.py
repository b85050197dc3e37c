"""Kubernetes' own YAML reader as a test oracle: helm's ``fromYaml`` (sigs.k8s.io/yaml over
go-yaml v2, the reader kubectl and the apiserver use), run on files put into a scratch chart.

The chart's one template prints, for every file, ``# <path>\\t<.Files.Get | fromYaml |
toJson | b64enc>`` (base64, so no character read can break the output's lines); ``fromYaml``
reports a reading error as ``{"Error": "..."}``. Numbers come back
through JSON (float64), so compare them numerically (``first_difference``).
"""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"
BUILD = "tools/kube-testenv/build.sh"
_TEMPLATE = """{{- range $path, $_ := .Files.Glob "files/**" }}
# {{ $path }}\t{{ $.Files.Get $path | fromYaml | toJson | b64enc }}
{{- end }}
"""


class HelmError(Exception):
    """What helm's fromYaml refused, with its message."""


def find_helm() -> Path | None:
    """helm from $UG_TESTENV_BIN or the kube-testenv build cache."""
    override = os.environ.get("UG_TESTENV_BIN")
    if override:
        bin_dir = Path(override)
    else:
        done = subprocess.run(
            [str(REPO / BUILD), "--print-bin-dir"], capture_output=True, text=True, check=False
        )
        bin_dir = Path(done.stdout.strip() or "/nonexistent")
    helm = bin_dir / "helm"
    return helm if os.access(helm, os.X_OK) else None


def require_helm() -> Path:
    helm = find_helm()
    if helm is None:
        message = f"helm not built; get it with `{BUILD}` (cached after the first build)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return helm


def read_with_helm(helm: Path, files: Mapping[str, bytes | Path]) -> dict[str, Any]:
    """name -> what Kubernetes reads from that file's YAML (a HelmError where it refuses)."""
    with tempfile.TemporaryDirectory(prefix="ug-helm-oracle-") as scratch:
        chart = Path(scratch)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: oracle\nversion: 0.1.0\n")
        (chart / "templates").mkdir()
        (chart / "templates" / "read.yaml").write_text(_TEMPLATE)
        (chart / "files").mkdir()
        names = {}
        for index, (name, content) in enumerate(files.items()):
            target = chart / "files" / f"{index:06d}.yaml"
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            else:
                target.write_bytes(content)
            names[f"files/{target.name}"] = name
        done = subprocess.run(
            [str(helm), "template", "oracle", str(chart)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"helm template failed: {done.stderr.strip()}")
    found: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        if not line.startswith("# files/"):
            continue
        path, _, text = line[2:].partition("\t")
        value = json.loads(base64.b64decode(text))
        if isinstance(value, dict) and set(value) == {"Error"}:
            value = HelmError(value["Error"])
        found[names[path]] = value
    missing = set(files) - set(found)
    if missing:
        raise RuntimeError(f"helm printed nothing for {sorted(missing)[:5]}")
    return found


def first_difference(ours: Any, theirs: Any, path: str = "") -> str | None:
    """Where ours and theirs (helm's, numbers as float64) differ, or None.

    Numbers compare numerically (Kubernetes' JSON makes 1000 of 1e3 and float64 of big
    integers), booleans only with booleans.
    """
    if isinstance(ours, bool) or isinstance(theirs, bool):
        same = ours is theirs
    elif isinstance(ours, int | float) and isinstance(theirs, int | float):
        same = float(ours) == float(theirs) or (
            math.isnan(float(ours)) and math.isnan(float(theirs))
        )
    elif isinstance(ours, dict) and isinstance(theirs, dict):
        if ours.keys() != theirs.keys():
            extra = sorted(set(ours) ^ set(theirs))[:3]
            return f"{path or '.'}: keys differ ({extra})"
        for key in ours:
            found = first_difference(ours[key], theirs[key], f"{path}.{key}")
            if found:
                return found
        return None
    elif isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return f"{path or '.'}: {len(ours)} items against {len(theirs)}"
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    else:
        same = type(ours) is type(theirs) and ours == theirs
    return None if same else f"{path or '.'}: ours {ours!r}, Kubernetes {theirs!r}"


def strictly_equal(a: Any, b: Any) -> bool:
    """Equal in value, type (1 is not 1.0) and key order, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(strictly_equal, a, b))
    return bool(a == b)
