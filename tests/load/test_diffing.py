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


def _shared_by_two(old: str, new: str) -> bool:
    """Whether the diff is shared, and both processes get files."""
    files = diffing._files_to_share(old, new, DEFAULT_MAX_BYTES)
    return files is not None and all(
        share.old or share.new
        for share in (diffing._share(files, worker=True), diffing._share(files, worker=False))
    )


def _same_result(old: str, new: str) -> None:
    assert _shared_by_two(old, new)
    one = _one_process(old, new)
    two = diffing.read_and_compare(old, new, DEFAULT_MAX_BYTES, DEFAULT_POLICY)
    for side_one, side_two in ((one.before, two.before), (one.after, two.after)):
        assert list(side_one.items()) == list(side_two.items())
    assert judging.judge(one.changes) == judging.judge(two.changes)
    assert one.changes.crds_compared == two.changes.crds_compared
    assert one.changes.unchanged == two.changes.unchanged
    assert one.changes.changed == two.changes.changed


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


def _to_worker(key: str) -> bool:
    return bool(zlib.crc32(key.encode()) & 1)


def _name_for(worker: bool, prefix: str) -> str:
    """A CRD name starting with prefix (names sort as their files do) that goes to the
    worker's share (or this process's)."""
    for number in range(1000):
        name = f"{prefix}{number}.example.com"
        if _to_worker(name) == worker:
            return name
    raise AssertionError("no name found")


def _file_for(worker: bool, prefix: str, suffix: str = ".json") -> str:
    """A file name that goes to the worker's share (or this process's) when no CRD name is
    found near its start."""
    for number in range(1000):
        name = f"{prefix}{number}{suffix}"
        if _to_worker(name) == worker:
            return name
    raise AssertionError("no name found")


# Each name's file sorts after the one before it: A_OWN, A_WORKER, B_OWN, B_WORKER, ...
[A_OWN, A_WORKER, B_OWN, B_WORKER, C_OWN, C_WORKER, D_OWN, D_WORKER] = [
    _name_for(worker, prefix) for prefix in "abcd" for worker in (False, True)
]


def _sides(tmp_path: Path, edit: dict[str, Any]) -> tuple[str, str]:
    """Eight CRDs on each side (four to each process), with edit's documents by file name."""
    names = [A_OWN, A_WORKER, B_OWN, B_WORKER, C_OWN, C_WORKER, D_OWN, D_WORKER]
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        for name in names:
            (tmp_path / side / f"{name}.json").write_text(json.dumps(_crd(name)))
    for relative, body in edit.items():
        if isinstance(body, bytes):
            (tmp_path / relative).write_bytes(body)
        else:
            (tmp_path / relative).write_text(json.dumps(body) if isinstance(body, dict) else body)
    return str(tmp_path / "old"), str(tmp_path / "new")


def _shared_sides(
    tmp_path: Path, edit: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """_sides, small as they are, shared by two processes."""
    monkeypatch.setattr(diffing, "TWO_PROCESSES_FROM_BYTES", 0)
    old, new = _sides(tmp_path, edit)
    assert _shared_by_two(old, new)
    return old, new


def _sent_to(decoy: str, body: dict[str, Any]) -> dict[str, Any]:
    """body with a label that the name sniffing takes for its name: it goes to decoy's share."""
    return {**body, "metadata": {"labels": {"name": decoy}, **body["metadata"]}}


def _refused(name: str) -> dict[str, Any]:
    return _crd(name, type="array")


CHANGED = {"properties": {"spec": {"type": "string"}}}
NOT_COMPILING = {"x-kubernetes-validations": [{"rule": "self.nosuch > 0"}]}
UNREADABLE = "{"
# What is refused where (the old side's reading first, then the new side in document order,
# then the old side's CRDs), in either share or across both; tests/load/test_diff_sides.py
# has the same order in one process.
PROBLEMS = {
    "refused in the worker's share": {f"new/{A_WORKER}.json": _refused(A_WORKER)},
    "refused in this process's share": {f"old/{A_OWN}.json": _refused(A_OWN)},
    "refused in both shares": {
        f"new/{A_WORKER}.json": _refused(A_WORKER),
        f"new/{A_OWN}.json": _crd(A_OWN, type="string"),
    },
    "refused in both shares, the worker's first": {
        f"new/{A_WORKER}.json": _refused(A_WORKER),
        f"new/{B_OWN}.json": _crd(B_OWN, type="string"),
    },
    "refused on the old side in both shares, this process's first": {
        f"old/{B_OWN}.json": _refused(B_OWN),
        f"old/{B_WORKER}.json": _refused(B_WORKER),
    },
    "a rule not compiling in the worker's share": {
        f"new/{A_WORKER}.json": _crd(A_WORKER, **NOT_COMPILING)
    },
    "unreadable in the worker's share": {f"old/{A_WORKER}.json": UNREADABLE},
    "unreadable on the old side in both shares": {
        f"old/{C_WORKER}.json": UNREADABLE,
        f"old/{A_OWN}.json": UNREADABLE,
    },
    "the old side's reading in one share before the new side's CRDs in the other": {
        f"old/{D_OWN}.json": UNREADABLE,
        f"new/{A_WORKER}.json": _refused(A_WORKER),
    },
    "the old side's reading further on before its CRDs, across the shares": {
        f"old/{A_WORKER}.json": _refused(A_WORKER),
        f"old/{D_OWN}.json": UNREADABLE,
    },
    "the new side's reading in one share before the old side's CRDs in the other": {
        f"old/{A_OWN}.json": _refused(A_OWN),
        f"new/{D_WORKER}.json": UNREADABLE,
    },
    "the new side's reading after its CRDs in the other share": {
        f"new/{A_OWN}.json": _refused(A_OWN),
        f"new/{B_WORKER}.json": UNREADABLE,
    },
    "a document not a mapping in the worker's share": {
        f"new/{_file_for(True, 'b')}": "[1]\n",
        f"new/{C_OWN}.json": _refused(C_OWN),
    },
    "a truncated gzip file in the worker's share": {
        f"new/{_file_for(True, 'b', '.gz')}": b"\x1f\x8b\x08"
    },
    "defined twice, once in each share": {"new/zz.json": _sent_to(A_OWN, _crd(A_WORKER))},
    "defined twice in the worker's share": {"new/zz.json": _sent_to(A_WORKER, _crd(A_WORKER))},
    "defined twice on the old side before a refused CRD further on": {
        f"old/{_file_for(True, 'b')}": _sent_to(B_WORKER, _crd(A_OWN)),
        f"old/{C_OWN}.json": _refused(C_OWN),
    },
    "a List's first CRD defined twice, in the other share, before its second refused": {
        f"new/{C_OWN}.json": {
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"name": C_OWN},
            "items": [_crd(A_WORKER), _refused("c.example.com")],
        }
    },
    "a refused CRD before a name defined twice further on in the other share": {
        f"new/{A_WORKER}.json": _refused(A_WORKER),
        f"new/{C_OWN}.json": _crd(A_OWN),
    },
}
FINE = {
    "a change in the worker's share": {f"new/{A_WORKER}.json": _crd(A_WORKER, **CHANGED)},
    "removed from the worker's share": {f"new/{A_WORKER}.json": "{}"},
    "added in the worker's share": {"new/zz.json": _sent_to(A_WORKER, _crd("zz.example.com"))},
    "old side in the worker's share, new in this process's": {
        f"new/{A_WORKER}.json": "{}",
        "new/zz.json": _sent_to(A_OWN, _crd(A_WORKER, **CHANGED)),
    },
    "new side in the worker's share, old in this process's": {
        f"new/{A_OWN}.json": "{}",
        "new/zz.json": _sent_to(A_WORKER, _crd(A_OWN, **CHANGED)),
    },
    # only the new side's rules are compiled (tests/load/test_diff_sides.py)
    "a rule not compiling on the old side in the worker's share": {
        f"old/{A_WORKER}.json": _crd(A_WORKER, **NOT_COMPILING)
    },
    "a rule not compiling on the old side, its new side in the other share": {
        f"old/{A_WORKER}.json": _crd(A_WORKER, **NOT_COMPILING),
        f"new/{A_WORKER}.json": "{}",
        "new/zz.json": _sent_to(A_OWN, _crd(A_WORKER)),
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
    assert str(tmp_path) in str(shared.value)


@pytest.mark.parametrize("edit", FINE.values(), ids=FINE.keys())
def test_without_a_problem_two_processes_share_it(
    edit: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_result(*_shared_sides(tmp_path, edit, monkeypatch))


SEMVER = {
    "type": "string",
    "maxLength": 64,
    "x-kubernetes-validations": [{"rule": "isSemver(self)"}],
}


@pytest.mark.parametrize("held", [False, True], ids=["new rule", "rule held already"])
def test_an_older_minor_refuses_alike_in_two_processes(
    held: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = _crd(A_WORKER, properties={"version": SEMVER})
    edit = {f"new/{A_WORKER}.json": new, **({f"old/{A_WORKER}.json": new} if held else {})}
    old_side, new_side = _shared_sides(tmp_path, edit, monkeypatch)

    def both(minor: tuple[int, int]) -> list[str]:
        cores = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cores)})
        try:
            results = [_compared_or_refused(old_side, new_side, minor)]
        finally:
            os.sched_setaffinity(0, cores)
        return [*results, _compared_or_refused(old_side, new_side, minor)]

    one, two = both((1, 33))
    assert one == two
    assert ("Kubernetes 1.33 does not know isSemver" in one) is not held
    assert both((1, 34)) == ["", ""]


def _compared_or_refused(old: str, new: str, minor: tuple[int, int]) -> str:
    try:
        diffing.read_and_compare(old, new, DEFAULT_MAX_BYTES, DEFAULT_POLICY, minor)
    except LoadError as error:
        return str(error)
    return ""


def test_an_older_minors_estimator_refuses_alike_in_two_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cel-go v0.22 (1.32) sizes nothing through dyn(): the rule's cost is past every budget
    there, and 8 at 1.35 (tests/cel_cost_rows.py, held to both apiservers)."""
    dyn = {
        "type": "string",
        "maxLength": 10,
        "x-kubernetes-validations": [{"rule": "dyn(self).matches('^a')"}],
    }
    new = _crd(A_WORKER, properties={"name": dyn})
    old_side, new_side = _shared_sides(tmp_path, {f"new/{A_WORKER}.json": new}, monkeypatch)
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        one = _compared_or_refused(old_side, new_side, (1, 32))
    finally:
        os.sched_setaffinity(0, cores)
    two = _compared_or_refused(old_side, new_side, (1, 32))
    assert one == two
    assert "estimated rule cost exceeds budget by factor of more than 100x" in one
    assert _compared_or_refused(old_side, new_side, (1, 33)) == ""
