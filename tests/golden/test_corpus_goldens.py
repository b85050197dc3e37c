"""The JSON report of every consecutive release pair in the corpus, against a reviewed snapshot.

Regenerate after a deliberate change with `UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden`, then
read the diff: every new finding must be true of the apiserver, every vanished one explained.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from corpus import pairs, require_corpus
from upgrade_guard import engine
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import load_documents

GOLDEN = Path(__file__).resolve().parent / "corpus"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
KEYS = ("code", "severity", "crd", "version", "path", "message")


def snapshot(project: str, old: str, new: str) -> dict[str, Any]:
    root = require_corpus() / project
    outcome = engine.compare_crds(
        crds_from(load_documents(str(root / old))), crds_from(load_documents(str(root / new)))
    )
    findings = [
        {
            "code": f.code,
            "severity": str(f.severity),
            "crd": f.crd,
            "version": f.version,
            "path": f.path,
            "message": f.message,
        }
        for f in outcome.findings
    ]
    return {"verdict": outcome.verdict, "findings": findings}


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What a reviewer needs to see: verdict change, findings gone, findings new."""
    lines = []
    if expected["verdict"] != actual["verdict"]:
        lines.append(f"verdict {expected['verdict']} -> {actual['verdict']}")

    def key(f: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(f[k] for k in KEYS)

    before, after = {key(f) for f in expected["findings"]}, {key(f) for f in actual["findings"]}
    lines += [f"- {item}" for item in sorted(before - after, key=str)]
    lines += [f"+ {item}" for item in sorted(after - before, key=str)]
    return lines


@pytest.mark.parametrize(("project", "old", "new"), pairs(), ids=lambda p: str(p))
def test_corpus_pair_matches_golden(project: str, old: str, new: str) -> None:
    golden = GOLDEN / project / f"{old}__{new}.json"
    actual = snapshot(project, old, new)
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
    expected = json.loads(golden.read_text())
    problems = differences(expected, actual)
    assert not problems, "\n".join(problems[:40])


def test_a_wrong_golden_is_caught() -> None:
    finding = dict(
        zip(KEYS, ("UG201", "error", "a.example.com", "v1", "spec.x", "removed"), strict=True)
    )
    expected = {"verdict": "unsafe", "findings": [finding]}
    assert differences(expected, expected) == []
    assert differences(expected, {"verdict": "safe", "findings": []}) == [
        "verdict unsafe -> safe",
        f"- {tuple(finding.values())}",
    ]
    moved = {"verdict": "unsafe", "findings": [{**finding, "path": "spec.y"}]}
    assert len(differences(expected, moved)) == 2
