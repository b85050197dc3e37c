"""Run verify-lifecycle over one project of ../shared/corpus, rebuilt as a git repository
in a temporary directory (tests/lifecycle/lifecycle_kit.corpus_repository says how).

    .venv/bin/python tools/lifecycle_corpus.py cert-manager [--output text|json|...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from corpus import CORPUS  # noqa: E402
from lifecycle.lifecycle_kit import corpus_repository  # noqa: E402


def main(project: str, *options: str) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        repo = corpus_repository(CORPUS / project, Path(scratch) / project)
        done = repo.ug("verify-lifecycle", "crds", "--releases", "*", *options)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
