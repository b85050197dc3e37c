"""Benchmark: what each of the diff's three shortcuts earns, against the same run without it.

Run: ``.venv/bin/python tools/bench_parts.py [--runs 3] [--project NAME] [--corpus DIR]``

On a project's newest release pair (provider-upjet-aws by default), as minified JSON, one
file per document named by its index (tools/bench.py's JSON input), the best CPU time of
``--runs`` runs in this process, with and without:

- the subtree cache (``crd_validation``'s passed subtrees, off: keyed from no depth):
  checking the new side's CRDs (what the hook does with a chart's) and both sides as
  ``diff_sides`` does;
- the scan before ``json.loads`` (``json_reader._scan``): against what it spares, a walk of
  the parsed values for their depth and a search for surrogate escapes;
- diffing's shares by the CRD name near each file's start (off: by the file's name): the
  sharing in each process, and the comparing of the CRDs the shares split, which this
  process does alone after both shares are done.

CPU time, because a busy machine disturbs it less than wall time.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))
sys.path.insert(0, str(REPO / "tools"))

from bench import DEFAULT_CORPUS, PROVIDER, as_json, tags  # noqa: E402
from upgrade_guard import diffing  # noqa: E402
from upgrade_guard.apiserver import crd_validation  # noqa: E402
from upgrade_guard.load import json_reader  # noqa: E402
from upgrade_guard.load.crds import crds_from, diff_sides  # noqa: E402
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, load_documents  # noqa: E402
from upgrade_guard.load.yaml_scalars import MAX_DEPTH  # noqa: E402
from upgrade_guard.policy import DEFAULT_POLICY  # noqa: E402


def best_cpu(runs: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in node)
    return False


def subtree_cache(old: Path, new: Path, runs: int) -> list[tuple[str, float, float]]:
    old_documents, new_documents = list(load_documents(str(old))), list(load_documents(str(new)))
    cases = {
        "checking the new side's CRDs": lambda: crds_from(new_documents),
        "checking both sides (diff_sides)": lambda: diff_sides(old_documents, new_documents),
    }
    rows = []
    for label, work in cases.items():
        cached = best_cpu(runs, work)
        depth = crd_validation._KEYED_FROM_DEPTH
        crd_validation._KEYED_FROM_DEPTH = sys.maxsize
        try:
            uncached = best_cpu(runs, work)
        finally:
            crd_validation._KEYED_FROM_DEPTH = depth
        rows.append((label, cached, uncached))
    return rows


def json_scan(old: Path, new: Path, runs: int) -> list[tuple[str, float, float]]:
    contents = [path.read_bytes() for side in (old, new) for path in sorted(side.glob("*.json"))]
    texts = [data.decode() for data in contents]
    values = [json_reader.json.loads(text) for text in texts]

    def spared() -> None:
        for text, value in zip(texts, values, strict=True):
            _deeper_than(value, MAX_DEPTH)
            json_reader._SURROGATE_ESCAPE.search(text)

    scan = best_cpu(runs, lambda: [json_reader._scan(data, MAX_DEPTH) for data in contents])
    return [("the scan, against what it spares", scan, best_cpu(runs, spared))]


def _merged(own: Any, theirs: Any, headed: Any, files: Any) -> None:
    """What this process does with both shares loaded, the worker's whole CRDs at hand."""
    diffing._merged(
        own,
        headed,
        files,
        DEFAULT_POLICY,
        lambda old, new: diffing._whole(theirs, set(old), set(new)),
    )


def shares(old: Path, new: Path, runs: int) -> list[tuple[str, float, float]]:
    files = diffing._files_to_share(str(old), str(new), DEFAULT_MAX_BYTES)
    assert files is not None, "too little input to share"
    by_name = diffing._falls_to_worker

    def by_file_name(path: Path) -> bool:
        return bool(zlib.crc32(path.name.encode()) & 1)

    rows: dict[str, list[float]] = {"sharing, in each process": [], "comparing what is split": []}
    for falls_to_worker in (by_name, by_file_name):
        diffing._falls_to_worker = falls_to_worker  # type: ignore[assignment]
        try:
            shared = best_cpu(runs, lambda: diffing._share(files, worker=True))
            own, theirs = (
                diffing._loaded(diffing._share(files, worker=w), DEFAULT_MAX_BYTES, DEFAULT_POLICY)
                for w in (False, True)
            )
        finally:
            diffing._falls_to_worker = by_name  # type: ignore[assignment]
        merged = functools.partial(_merged, own, theirs, diffing._headed(theirs), files)
        split = best_cpu(runs, merged)
        rows["sharing, in each process"].append(shared)
        rows["comparing what is split"].append(split)
    return [(label, with_it, without) for label, (with_it, without) in rows.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--project", default=PROVIDER)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    gc.disable()  # as upgrade_guard.cli.main runs every command
    with tempfile.TemporaryDirectory(prefix="ug-bench-parts-") as scratch:
        project = as_json(args.corpus / args.project, Path(scratch))
        old, new = tags(project)[-2:]
        print(f"{args.project} {old.name} -> {new.name}, JSON; best CPU s of {args.runs} runs")
        print(f"{'':<50} {'with':>8} {'without':>8}")
        for part, measure in (("subtree cache", subtree_cache), ("JSON scan", json_scan),
                              ("shares by CRD name", shares)):  # fmt: skip
            for label, with_it, without in measure(old, new, args.runs):
                print(f"{part + ': ' + label:<50} {with_it:>8.3f} {without:>8.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
