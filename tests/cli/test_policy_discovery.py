"""The policy is found by convention (.upgrade-guard.yaml up to the git root) and every
report says which policy judged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from crd_builders import field_crd

BREAK = {
    "declared-breaks": [
        {
            "crd": field_crd({"type": "string"})["metadata"]["name"],
            "rule": "enum-restricted",
            "path": "spec.field",
            "reason": "only a was ever written",
        }
    ]
}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "upgrade_guard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "charts" / "crds").mkdir(parents=True)
    (root / ".git").mkdir()  # the git root as find_policy sees it
    (root / "charts" / "old.yaml").write_text(yaml.safe_dump(field_crd({"type": "string"})))
    new = field_crd({"type": "string", "enum": ["a"]})
    (root / "charts" / "new.yaml").write_text(yaml.safe_dump(new))
    return root


def test_policy_at_the_repository_root_is_found_from_a_subdirectory(project: Path) -> None:
    (project / ".upgrade-guard.yaml").write_text(yaml.safe_dump(BREAK))
    result = run(project / "charts", "diff", "old.yaml", "new.yaml", "--output", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["policy"] == "../.upgrade-guard.yaml"
    assert [f["reason"] for f in report["findings"]] == ["only a was ever written"]


def test_without_a_policy_the_report_says_defaults(project: Path) -> None:
    result = run(project / "charts", "diff", "old.yaml", "new.yaml")
    assert result.returncode == 1
    assert "policy: none (built-in defaults)" in result.stdout


def test_search_stops_at_the_git_root(project: Path) -> None:
    (project.parent / ".upgrade-guard.yaml").write_text(yaml.safe_dump(BREAK))
    result = run(project, "diff", "charts/old.yaml", "charts/new.yaml", "--output", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["policy"] == "none (built-in defaults)"


def test_an_explicit_policy_wins_and_is_named(project: Path) -> None:
    (project / ".upgrade-guard.yaml").write_text("profile: bogus\n")
    (project / "other.yaml").write_text(yaml.safe_dump(BREAK))
    result = run(project, "diff", "charts/old.yaml", "charts/new.yaml", "--policy", "other.yaml")
    assert result.returncode == 0, result.stderr
    assert "policy: other.yaml" in result.stdout


def test_a_broken_conventional_policy_is_bad_input_naming_it(project: Path) -> None:
    (project / ".upgrade-guard.yaml").write_text("profile: bogus\n")
    result = run(project, "diff", "charts/old.yaml", "charts/new.yaml")
    assert result.returncode == 2
    assert result.stderr.startswith("upgrade-guard: error: .upgrade-guard.yaml: profile")
