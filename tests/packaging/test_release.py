"""What the release workflow publishes, built and checked here as far as this machine allows:
the sdist and wheel (python -m build, twine check) and the workflow itself (actionlint, with
shellcheck on its run: scripts)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import upgrade_guard

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
BIN = Path(sys.executable).parent
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return sorted(out.iterdir())


def test_build_makes_one_sdist_and_one_wheel_that_twine_accepts(dist: list[Path]) -> None:
    version = upgrade_guard.__version__
    assert [p.name for p in dist] == [
        f"upgrade_guard-{version}-py3-none-any.whl",
        f"upgrade_guard-{version}.tar.gz",
    ]
    checked = subprocess.run(
        [str(BIN / "twine"), "check", "--strict", *map(str, dist)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_wheel_carries_the_command_and_the_type_marker(dist: list[Path]) -> None:
    with zipfile.ZipFile(dist[0]) as wheel:
        names = wheel.namelist()
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "upgrade-guard = upgrade_guard.cli:main" in wheel.read(entry_points).decode()
    assert "upgrade_guard/py.typed" in names
    assert not any(name.startswith("tests/") for name in names)


def test_release_workflow_passes_actionlint() -> None:
    built = subprocess.run(
        [str(REPO / "tools" / "actionlint" / "build.sh"), "--print-bin"],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        message = "actionlint not built: run tools/actionlint/build.sh (needs Go)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}")
        pytest.skip(message)
    result = subprocess.run(
        [
            built.stdout.strip(),
            "-no-color",
            "-oneline",
            "-shellcheck",
            str(BIN / "shellcheck"),
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_the_publishing_job_may_mint_an_oidc_token_and_the_digest_is_recorded() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    assert workflow["permissions"] == {"contents": "read"}
    minting = {name for name, job in jobs.items() if "id-token" in job.get("permissions", {})}
    assert minting == {"pypi"}
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    assert any("pypa/gh-action-pypi-publish" in s.get("uses", "") for s in jobs["pypi"]["steps"])
    steps = jobs["image"]["steps"]
    assert any("steps.push.outputs.digest" in str(s.get("env", {})) for s in steps)
