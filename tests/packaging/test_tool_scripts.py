"""The shell scripts under tools/ and .ci/: shellcheck-clean, and no pipe that SIGPIPE can fail.

Every script runs under ``set -o pipefail``. A reader that exits before its producer has
written everything (``head``, ``grep -q``, ``grep -m``) makes the producer die of SIGPIPE at
random, and the pipe fail with 141: ``etcd --version | head -1`` failed 2 of 3 cold builds.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([*REPO.glob("tools/**/*.sh"), REPO / ".ci" / "run"])
SHORT_READER = re.compile(r"\|\s*(head\b|grep\s+(-\w*[qm]|--quiet|--max-count))")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_reader_cuts_a_producer_short(script: Path) -> None:
    lines = script.read_text().splitlines()
    cut = [f"{n}: {line}" for n, line in enumerate(lines, 1) if SHORT_READER.search(line)]
    assert not cut, "\n".join(cut)


def test_shellcheck_is_clean() -> None:
    shellcheck = REPO / ".venv" / "bin" / "shellcheck"
    result = subprocess.run([str(shellcheck), *map(str, SCRIPTS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
