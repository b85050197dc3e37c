"""Benchmark: diff every consecutive release pair of ../shared/corpus, per project and input.

Run: ``.venv/bin/python tools/bench.py [--runs 3] [--project NAME ...] [--corpus DIR]``

Every project is measured twice: from its YAML files as they are, and from the same
documents as minified JSON, one file per document, written to a temporary directory first
(the hook's input is mostly JSON: packed bundles, apiserver bodies). For each, in a fresh
subprocess and as the median of ``--runs`` runs:

- wall: the whole diff of every consecutive pair, as the CLI does it (load both sides from
  their directories, check the CRDs' shape, compare);
- floor: reading the same bytes and nothing else, with the fastest reader that reads them
  as Kubernetes does: ``json.loads`` for JSON, our YAML reader (load/yaml_reader) for YAML;
- cpu: the same as CPU time (process_time), less disturbed by other load on the machine;
- compare: ``engine.compare_crds`` alone, on CRD sets loaded beforehand;
- x floor: wall / floor, what the rest of the run costs over parsing;
- libyaml: the YAML floor without the rapidyaml fast path (what dropping it would cost).

Last, a stream of 400 and of 4,000 small documents is read by the fast path alone and by
libyaml alone: ten times the documents should take about ten times as long.

Peak RSS is that of another fresh subprocess diffing every pair once. Tags are taken in the
order of SOURCE.txt's "tags taken". Targets (issue 14): the provider-upjet-aws pair under
5 s from YAML and 2 s from JSON, neither above the peak RSS measured before (315 MiB).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))

from upgrade_guard import engine  # noqa: E402
from upgrade_guard.load.crds import crds_from, diff_sides  # noqa: E402
from upgrade_guard.load.documents import load_documents  # noqa: E402
from upgrade_guard.load.fast_yaml import read_fast  # noqa: E402
from upgrade_guard.load.yaml_reader import (  # noqa: E402
    MAX_DEPTH,
    plain_differs,
    read_documents,
    read_documents_faithful,
)

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
PROVIDER = "provider-upjet-aws"
TARGET_PROVIDER_S = {"yaml": 5.0, "json": 2.0}
TARGET_PROVIDER_RSS_MIB = 315.0
INPUTS = ("yaml", "json")
SUFFIXES = (".yaml", ".yml", ".json")


def tags(project: Path) -> list[Path]:
    """Tag directories in SOURCE.txt order ("tags taken", oldest first)."""
    text = (project / "SOURCE.txt").read_text()
    section = text.split("tags taken", 1)[1]
    names = re.findall(r"^\s*-\s+(\S+)\s+commit", section, flags=re.MULTILINE)
    return [project / name for name in names if (project / name).is_dir()]


def as_json(project: Path, into: Path) -> Path:
    """The project's tags with every document as a minified JSON file, under into."""
    target = into / project.name
    for tag in tags(project):
        for index, document in enumerate(load_documents(str(tag))):
            path = target / tag.name / f"{index:05d}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(document.body, separators=(",", ":"), ensure_ascii=False))
    (target / "SOURCE.txt").write_text((project / "SOURCE.txt").read_text())
    return target


def _pairs(project: Path) -> list[tuple[Path, Path]]:
    return list(itertools.pairwise(tags(project)))


def _median_time(
    runs: int, work: Callable[[], Any], clock: Callable[[], float] = time.perf_counter
) -> float:
    times = []
    for _ in range(runs):
        start = clock()
        work()
        times.append(clock() - start)
    return statistics.median(times)


def _diff_all(steps: list[tuple[Path, Path]]) -> None:
    for old, new in steps:
        engine.compare_crds(*diff_sides(load_documents(str(old)), load_documents(str(new))))


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(project: Path, runs: int) -> dict[str, Any]:
    """The times for one project's input, in this process."""
    steps = _pairs(project)
    sides = [side for pair in steps for side in pair]
    files = [f for side in sides for f in sorted(side.rglob("*")) if f.suffix in SUFFIXES]
    contents = [f.read_bytes() for f in files]
    json_input = files[0].suffix == ".json"

    def floor() -> None:
        for data in contents:
            if json_input:
                json.loads(data)
            else:
                for _ in read_documents(data):
                    pass

    def without_fast_path() -> None:
        for data in contents:
            for _ in read_documents_faithful(data):
                pass

    wall = _median_time(runs, lambda: _diff_all(steps))
    cpu = _median_time(runs, lambda: _diff_all(steps), time.process_time)
    parse = _median_time(runs, floor)
    libyaml = float("nan") if json_input else _median_time(runs, without_fast_path)
    loaded = {side: crds_from(load_documents(str(side))) for pair in steps for side in pair}

    def compare_all() -> None:
        for old, new in steps:
            engine.compare_crds(loaded[old], loaded[new])

    compare = _median_time(runs, compare_all)
    return {
        "pairs": len(steps),
        "mb_read": sum(map(len, contents)) / 1e6,
        "wall_s": wall,
        "cpu_s": cpu,
        "floor_s": parse,
        "libyaml_s": libyaml,
        "compare_s": compare,
    }


def _worker(mode: str, project: Path, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, mode, str(project), "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: {project} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _line(row: dict[str, Any]) -> str:
    ratio = row["wall_s"] / row["floor_s"] if row["floor_s"] else float("nan")
    return (
        f"{row['project']:<22} {row['input']:<5} {row['pairs']:>5} {row['mb_read']:>8.1f}"
        f" {row['wall_s']:>8.2f} {row['cpu_s']:>8.2f} {row['floor_s']:>8.2f} {ratio:>8.1f}"
        f" {row['compare_s']:>8.2f} {row['libyaml_s']:>8.2f} {row['peak_rss_mib']:>8.0f}"
    )


def small_documents(count: int, runs: int) -> tuple[float, float]:
    """Seconds to read a stream of count small documents: fast path, libyaml alone."""
    data = b"".join(b"---\nkind: A\nname: n%d\nspec: {a: [1, 2]}\n" % i for i in range(count))
    fast = _median_time(runs, lambda: read_fast(data, MAX_DEPTH, plain_differs))
    libyaml = _median_time(runs, lambda: list(read_documents_faithful(data)))
    return fast, libyaml


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3, help="runs per median (default 3)")
    parser.add_argument("--project", action="append", help="only these projects")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rss-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker or args.rss_worker:
        gc.disable()  # as upgrade_guard.cli.main runs every command
    if args.worker:
        print(json.dumps(measure(args.worker, args.runs)))
        return 0
    if args.rss_worker:
        _diff_all(_pairs(args.rss_worker))
        print(json.dumps({"peak_rss_mib": _peak_rss_mib()}))
        return 0
    if not args.corpus.is_dir():
        print(f"bench: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    projects = sorted(p for p in args.corpus.iterdir() if (p / "SOURCE.txt").is_file())
    if args.project:
        projects = [p for p in projects if p.name in args.project]
    print(f"medians of {args.runs} runs; each project and input in a fresh process; seconds")
    print(
        f"{'project':<22} {'input':<5} {'pairs':>5} {'MB read':>8} {'wall':>8} {'cpu':>8}"
        f" {'floor':>8} {'x floor':>8} {'compare':>8} {'libyaml':>8} {'RSS MiB':>8}"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="ug-bench-json-") as scratch:
        for project in projects:
            for kind in INPUTS:
                source = project if kind == "yaml" else as_json(project, Path(scratch))
                row = {"project": project.name, "input": kind}
                row.update(_worker("--worker", source, args.runs))
                row.update(_worker("--rss-worker", source, args.runs))
                rows.append(row)
                print(_line(row), flush=True)
    print()
    for count in (400, 4000):
        fast, libyaml = small_documents(count, args.runs)
        print(
            f"{count:>4} small documents in one stream: fast path {fast:.3f} s,"
            f" libyaml {libyaml:.3f} s"
        )
    verdicts = []
    for row in rows:
        if row["project"] != PROVIDER:
            continue
        kind = row["input"]
        target_s, target_mib = TARGET_PROVIDER_S[kind], TARGET_PROVIDER_RSS_MIB
        verdicts.append((f"provider pair, {kind}, wall", row["wall_s"], target_s, "s"))
        verdicts.append(
            (f"provider pair, {kind}, peak RSS", row["peak_rss_mib"], target_mib, "MiB")
        )
    print()
    for name, value, limit, unit in verdicts:
        status = "ok" if value <= limit else "MISSED"
        print(f"{name:<34} {value:>9.2f} {unit:<3} target <= {limit:.2f} {unit:<3} {status}")
    return 0 if all(value <= limit for _, value, limit, _ in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
