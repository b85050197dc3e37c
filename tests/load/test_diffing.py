"""A diff shared by two processes gives what one process gives: the same CRDs in the same
order, the same findings, the same first problem. Corpus pairs run both ways (small ones with
the size threshold lowered to 0); each problem row puts its cause in the child's share, the
parent's, or across both, beside the same input without it."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

import pytest

from corpus import pairs, require_corpus
from upgrade_guard import diffing, judging
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError
from upgrade_guard.policy import DEFAULT_POLICY

PROVIDER = "provider-upjet-aws"


def _one_process(old: str, new: str) -> diffing.Compared:
    """The diff as it runs on one core (the hook's container): in one process."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        return diffing.read_and_compare(old, new, DEFAULT_MAX_BYTES, DEFAULT_POLICY)
    finally:
        os.sched_setaffinity(0, cores)


def _shared_by_two(compared: diffing.Compared) -> bool:
    """Whether the child held some CRDs: the parent keeps those as stand-ins without a spec."""
    return any(
        "spec" not in crd.raw for crd in [*compared.before.values(), *compared.after.values()]
    )


def _same_result(old: str, new: str) -> None:
    one = _one_process(old, new)
    two = diffing.read_and_compare(old, new, DEFAULT_MAX_BYTES, DEFAULT_POLICY)
    assert _shared_by_two(two) and not _shared_by_two(one)
    for side_one, side_two in ((one.before, two.before), (one.after, two.after)):
        assert list(side_one) == list(side_two)
        assert [c.source for c in side_one.values()] == [c.source for c in side_two.values()]
        assert [c.raw.get("metadata") for c in side_one.values()] == [
            c.raw.get("metadata") for c in side_two.values()
        ]
    assert judging.judge(one.changes) == judging.judge(two.changes)
    assert one.changes.crds_compared == two.changes.crds_compared


@pytest.mark.parametrize("project, old, new", pairs(), ids=lambda p: str(p))
def test_every_corpus_pair_gives_the_same_result_in_two_processes(
    project: str, old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = require_corpus() / project
    if project != PROVIDER:
        monkeypatch.setattr(diffing, "TWO_PROCESSES_FROM_BYTES", 0)
    _same_result(str(root / old), str(root / new))


def test_json_files_named_by_index_give_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old and new files of one CRD have different names: the share goes by the CRD name."""
    root = require_corpus() / "cert-manager"
    for tag in ("v1.0.0", "v1.21.1"):
        for index, path in enumerate(sorted((root / tag).glob("*.yaml"))[::-1]):
            body = _yaml(path)
            (tmp_path / tag).mkdir(exist_ok=True)
            (tmp_path / tag / f"{index:05d}.json").write_text(json.dumps(body))
    monkeypatch.setattr(diffing, "TWO_PROCESSES_FROM_BYTES", 0)
    _same_result(str(tmp_path / "v1.0.0"), str(tmp_path / "v1.21.1"))


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text())


# Problems ------------------------------------------------------------------------------------
def _crd(name: str, **schema_extra: Any) -> dict[str, Any]:
    group = name.split(".", 1)[1]
    plural = name.split(".", 1)[0]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": plural.capitalize(), "singular": plural},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", **schema_extra}},
                }
            ],
        },
    }


def _name_for(child: bool, start: int = 0) -> str:
    """A CRD name that goes to the child's share (or the parent's)."""
    for number in range(start, start + 1000):
        name = f"things{number}.example.com"
        if bool(zlib.crc32(name.encode()) & 1) == child:
            return name
    raise AssertionError("no name found")


def _sides(tmp_path: Path, edit: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """Eight CRDs on each side (four to each process), with edit's documents by file name."""
    names = [_name_for(child, 100 * n) for n in range(4) for child in (False, True)]
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        for name in names:
            (tmp_path / side / f"{name}.json").write_text(json.dumps(_crd(name)))
    for relative, body in edit.items():
        (tmp_path / relative).write_text(json.dumps(body) if isinstance(body, dict) else body)
    return str(tmp_path / "old"), str(tmp_path / "new")


def _shared_sides(
    tmp_path: Path, edit: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """_sides, small as they are, shared by two processes."""
    monkeypatch.setattr(diffing, "TWO_PROCESSES_FROM_BYTES", 0)
    return _sides(tmp_path, edit)


def _sent_to(decoy: str, body: dict[str, Any]) -> dict[str, Any]:
    """body with a label that the name sniffing takes for its name: it goes to decoy's share."""
    return {**body, "metadata": {"labels": {"name": decoy}, **body["metadata"]}}


CHILD, PARENT = _name_for(True), _name_for(False)
CHANGED = {"properties": {"spec": {"type": "string"}}}
PROBLEMS = {
    "refused in the child's share": {f"new/{CHILD}.json": _crd(CHILD, type="array")},
    "refused in the parent's share": {f"old/{PARENT}.json": _crd(PARENT, type="array")},
    "refused in both shares": {
        f"new/{CHILD}.json": _crd(CHILD, type="array"),
        f"new/{PARENT}.json": _crd(PARENT, type="string"),
    },
    "unreadable in the child's share": {f"old/{CHILD}.json": "{"},
    "defined twice, once in each share": {"new/zz.json": _sent_to(PARENT, _crd(CHILD))},
}
FINE = {
    "a change in the child's share": {f"new/{CHILD}.json": _crd(CHILD, **CHANGED)},
    "removed from the child's share": {f"new/{CHILD}.json": "{}"},
    "old side in the child's share, new in the parent's": {
        f"new/{CHILD}.json": "{}",
        "new/zz.json": _sent_to(PARENT, _crd(CHILD, **CHANGED)),
    },
    "new side in the child's share, old in the parent's": {
        f"new/{PARENT}.json": "{}",
        "new/zz.json": _sent_to(CHILD, _crd(PARENT, **CHANGED)),
    },
}


@pytest.mark.parametrize("edit", PROBLEMS.values(), ids=PROBLEMS.keys())
def test_a_problem_is_reported_as_one_process_reports_it(
    edit: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = _shared_sides(tmp_path, edit, monkeypatch)
    with pytest.raises(LoadError) as alone:
        _one_process(old, new)
    with pytest.raises(LoadError) as shared:
        diffing.read_and_compare(old, new, DEFAULT_MAX_BYTES, DEFAULT_POLICY)
    assert str(shared.value) == str(alone.value)


@pytest.mark.parametrize("edit", FINE.values(), ids=FINE.keys())
def test_without_a_problem_two_processes_share_it(
    edit: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_result(*_shared_sides(tmp_path, edit, monkeypatch))
