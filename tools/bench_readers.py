"""Benchmark: our readers against Kubernetes' own on the same bytes (issue 37: YAML within
2x of the fastest reader that reads as Go does, JSON within 1.5x).

Run: ``.venv/bin/python tools/bench_readers.py [--runs 5] [--project NAME ...] [--corpus DIR]``

For each project of the corpus, every file of every tag (what tools/bench.py's diff reads),
held in memory, then read whole, ``--runs`` times, the median printed in seconds:

- ours: what ``diff`` reads the files with (load/yaml_reader, load/json_reader);
- kubernetes: Kubernetes' own readers in Go (tools/goyaml, built from Go modules at the
  versions its go.mod pins): ``sigs.k8s.io/yaml`` (go-yaml v2, then JSON: kubectl, helm and
  the apiserver read YAML so), ``encoding/json`` for JSON, each value into ``interface{}``;
- raw: the parsers ours is built on, alone, without what makes them read as Go does:
  rapidyaml's parse and JSON emission, then ``orjson.loads`` (YAML); ``orjson.loads`` (JSON);
- libyaml: our faithful YAML path alone (PyYAML's C parser, Go's resolution).

The readers that read as Go does are ours, libyaml and Kubernetes' own (held to helm's
reader in tests/load); rapidyaml alone reads YAML 1.2 (``on``, ``010``, ``1_000`` differ) and
orjson differs from Go beyond int64. "ours / kubernetes" is the ratio the issue asks of the
fastest reader that reads as Go does; "ours / raw" is what reading as Go does costs over the
bare parse. JSON is each document as minified JSON, one file per document (bench.py's JSON
input). In-process times on both sides: no start-up, no file reads.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))
sys.path.insert(0, str(REPO / "tools"))

import orjson  # noqa: E402
import ryml  # type: ignore[import-untyped]  # noqa: E402

from bench import DEFAULT_CORPUS, SUFFIXES, as_json, median_time, projects, tags  # noqa: E402
from upgrade_guard.load.documents import documents_of  # noqa: E402
from upgrade_guard.load.yaml_reader import read_documents_faithful  # noqa: E402

BUILD = REPO / "tools" / "goyaml" / "build.sh"


def _raw_yaml(data: bytes) -> None:
    tree = ryml.parse_in_arena(data)
    encoded = bytearray(len(data) + len(data) // 4 + 4096)
    failed, size = ryml.emit_json_to_substr(tree, tree.root_id(), encoded)
    if failed:
        encoded = bytearray(size)
        ryml.emit_json_to_substr(tree, tree.root_id(), encoded)
    orjson.loads(encoded[:size])


def _raw_stream(data: bytes) -> None:
    """Each document of a stream alone (rapidyaml's JSON is of one document)."""
    for piece in data.split(b"\n---\n"):
        if piece.strip(b"-\n "):
            _raw_yaml(piece)


def _kubernetes(goyaml: Path, files: list[Path], runs: int) -> float:
    done = subprocess.run(
        [str(goyaml), str(runs), *map(str, files)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_readers: goyaml failed:\n{done.stderr}")
    return float(json.loads(done.stdout)["median_s"])


def measure(project: Path, goyaml: Path, runs: int) -> dict[str, Any]:
    files = [f for tag in tags(project) for f in sorted(tag.rglob("*")) if f.suffix in SUFFIXES]
    contents = [(str(f), f.read_bytes()) for f in files]
    json_input = files[0].suffix == ".json"

    def ours() -> None:
        for name, data in contents:
            for _ in documents_of(name, data):
                pass

    def raw() -> None:
        for _, data in contents:
            if json_input:
                orjson.loads(data)
            else:
                _raw_stream(data)

    def libyaml() -> None:
        for _, data in contents:
            for _ in read_documents_faithful(data):
                pass

    return {
        "mb": sum(len(data) for _, data in contents) / 1e6,
        "ours": median_time(runs, ours),
        "kubernetes": _kubernetes(goyaml, files, runs),
        "raw": median_time(runs, raw),
        "libyaml": float("nan") if json_input else median_time(runs, libyaml),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument("--project", action="append", help="only these projects")
    args = parser.parse_args()
    built = subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)
    if built.returncode != 0:
        raise SystemExit(f"bench_readers: {BUILD} failed:\n{built.stdout}{built.stderr}")
    goyaml = Path(built.stdout.strip().splitlines()[-1]) / "goyaml"
    if not args.corpus.is_dir():
        print(f"bench_readers: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    print(f"medians of {args.runs} runs, seconds, in-process (no start-up, no file reads)")
    print(
        f"{'project':<22} {'input':<5} {'MB':>6} {'ours':>7} {'kubernetes':>10} {'raw':>7}"
        f" {'libyaml':>7} {'ours/kubernetes':>15} {'ours/raw':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="ug-bench-readers-") as scratch:
        for project in projects(args.corpus, args.project):
            for kind in ("yaml", "json"):
                source = project if kind == "yaml" else as_json(project, Path(scratch))
                row = measure(source, goyaml, args.runs)
                print(
                    f"{project.name:<22} {kind:<5} {row['mb']:>6.1f} {row['ours']:>7.3f}"
                    f" {row['kubernetes']:>10.3f} {row['raw']:>7.3f} {row['libyaml']:>7.3f}"
                    f" {row['ours'] / row['kubernetes']:>15.2f}"
                    f" {row['ours'] / row['raw']:>8.2f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
