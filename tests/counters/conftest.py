"""Fixtures for the counter tests (helpers live in history_kit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from history_kit import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "project")
