"""Where the shared corpus of real CRD release histories is, and its upgrade pairs."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("UG_CORPUS", REPO.parent / "shared" / "corpus"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def require_corpus() -> Path:
    """The corpus directory; skip without it, except under CI=true where its absence fails."""
    if not CORPUS.is_dir():
        message = f"corpus not found at {CORPUS} (set UG_CORPUS)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return CORPUS


def tags(project: str) -> list[str]:
    """The project's tags oldest first, as its SOURCE.txt lists them."""
    text = (CORPUS / project / "SOURCE.txt").read_text()
    section = text.split("tags taken", 1)[1]
    return re.findall(r"^\s+- (\S+)\s", section, flags=re.MULTILINE)


def projects() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(p.name for p in CORPUS.iterdir() if (p / "SOURCE.txt").is_file())


def pairs() -> list[tuple[str, str, str]]:
    found = []
    for project in projects():
        project_tags = tags(project)
        found.extend((project, a, b) for a, b in itertools.pairwise(project_tags))
    return found
