"""verify-lifecycle over every corpus project's release history, rebuilt as a git repository
with the tags and dates of its RELEASES.tsv. Each project's findings (code, CRD, version and
the releases that make each one) are pinned in corpus/<project>.json, reviewed by hand;
``UPDATE_GOLDEN=1`` rewrites them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lifecycle_kit import corpus_repository

from corpus import CORPUS, projects, require_corpus

GOLDEN = Path(__file__).parent / "corpus"


@pytest.mark.parametrize("project", projects())
def test_lifecycle_findings_on_the_corpus(tmp_path: Path, project: str) -> None:
    require_corpus()
    repo = corpus_repository(CORPUS / project, tmp_path / project)
    done = repo.ug("verify-lifecycle", "crds", "--releases", "*", "--output", "json")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    rows = [
        [
            f["code"],
            f["crd"],
            f["version"],
            (f["old"] or {}).get("tag"),
            f["new"]["tag"],
        ]
        for f in report["findings"]
    ]
    golden = GOLDEN / f"{project}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text("[\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]\n")
    assert rows == json.loads(golden.read_text())
    assert done.returncode == (1 if rows else 0)
