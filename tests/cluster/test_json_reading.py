"""The JSON table of tests/load/json_cases is what Kubernetes reads: each body goes to the
real apiserver (a server-side dry-run create, so the answer is the object as it would be
stored) and through ``kubectl create --dry-run=client -o json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from load.json_cases import CASES, REFUSED, Case, body, read_back
from testenv import ToolRunner

_CREATE = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All"


def _numbers_equal(ours: Any, theirs: Any) -> bool:
    """Equal, numbers by value: Go prints the float64 1e20 as 100000000000000000000."""
    if isinstance(ours, float) and isinstance(theirs, int | float):
        return ours == float(theirs)
    return bool(ours == theirs)


@pytest.mark.cluster
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_json_case_is_what_the_apiserver_and_kubectl_read(
    case: Case, kubectl: ToolRunner, tmp_path: Path
) -> None:
    path = tmp_path / "crd.json"
    path.write_bytes(body(case))
    readers = {"apiserver": ("create", "--raw", _CREATE, "-f", str(path))}
    if case.kubectl_agrees:
        readers["kubectl"] = ("create", "--dry-run=client", "-o", "json", "-f", str(path))
    for reader, command in readers.items():
        done = kubectl(*command)
        if case.annotations_read is REFUSED:
            assert done.returncode != 0, f"{reader} read it: {done.stdout[:300]}"
            assert "cannot unmarshal number" in done.stderr, done.stderr
            continue
        assert done.returncode == 0, f"{reader}: {done.stderr}"
        annotations, default = read_back(json.loads(done.stdout))
        assert annotations == case.annotations_read, reader
        assert _numbers_equal(case.default_read, default), f"{reader}: {default!r}"
