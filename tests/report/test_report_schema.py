"""Every command's --output json is one shape, the published JSON Schema's: diff, the hook,
verify-history and verify-lifecycle, each run as a user runs it and checked with jsonschema
(the reference implementation, not ours)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from counters.history_kit import GIT_ENV
from crd_builders import field_crd
from upgrade_guard.report.report_schema import REPORT_SCHEMA

UPGRADE_GUARD = str(Path(sys.executable).with_name("upgrade-guard"))
EXAMPLE = Path(__file__).resolve().parents[2] / "chart-snippets" / "example-operator"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("UPGRADE_GUARD_")}
    return subprocess.run(
        args, cwd=cwd, env={**environment, **GIT_ENV}, capture_output=True, text=True, check=False
    )


def report(cwd: Path, *args: str) -> dict[str, Any]:
    done = run(cwd, UPGRADE_GUARD, *args, "--output", "json")
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


# the image check comes before any cluster read, so a stale image needs no cluster
HOOK = ["--crds", str(EXAMPLE / "crds" / "2.0.0"), "--counter", "controller-state-version=3"]
HOOK += ["--controller-image", "op:1.0.0", "--kubeconfig", "/nonexistent"]


@pytest.fixture
def released(tmp_path: Path) -> Path:
    """A git repository whose CRDs were stamped and tagged v0.1.0, then changed."""
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widgets.yaml").write_text(yaml.safe_dump(field_crd({"type": "string"})))
    for command in (
        ["git", "init", "-q", "-b", "main"],
        [UPGRADE_GUARD, "stamp", "crds", "--bump"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "v0.1.0"],
        ["git", "tag", "v0.1.0"],
    ):
        assert run(tmp_path, *command).returncode == 0, command
    (crds / "widgets.yaml").write_text(yaml.safe_dump(field_crd({"type": "integer"})))
    return tmp_path


def test_the_published_schema_is_valid_json_schema(tmp_path: Path) -> None:
    jsonschema.Draft202012Validator.check_schema(REPORT_SCHEMA)
    printed = run(tmp_path, UPGRADE_GUARD, "schema", "report")
    assert printed.returncode == 0 and json.loads(printed.stdout) == REPORT_SCHEMA


def test_every_command_reports_in_the_published_shape(released: Path) -> None:
    crds = str(EXAMPLE / "crds")
    stale_image = released / "images.yaml"
    stale_image.write_text('images: {"1.0.0": {controller-state-version: 2}}\n')
    reports = {
        "diff": report(released, "diff", f"{crds}/1.0.0", f"{crds}/2.0.0"),
        "verify-history": report(released, "verify-history", "crds", "--baseline-ref", "v0.1.0"),
        "verify-lifecycle": report(released, "verify-lifecycle", "crds", "--next", "v0.2.0"),
        "hook": report(released, "hook", *HOOK, "--image-table", str(stale_image)),
    }
    for command, document in reports.items():
        jsonschema.validate(document, REPORT_SCHEMA, cls=jsonschema.Draft202012Validator)
        assert list(document) == list(REPORT_SCHEMA["properties"]), command
        assert document["findings"], f"{command}: the case should find something"
    assert reports["verify-history"]["history"]["baseline"] == "v0.1.0"
    assert all(reports[c]["history"] is None for c in ("diff", "verify-lifecycle", "hook"))
