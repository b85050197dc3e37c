"""Benchmark: diff every consecutive release pair of ../shared/corpus, per project and input.

Run: ``.venv/bin/python tools/bench.py [--runs 3] [--project NAME ...] [--corpus DIR]``

Every project is measured twice: from its YAML files as they are, and from the same
documents as minified JSON, one file per document, written to a temporary directory first
(the hook's input is mostly JSON: packed bundles, apiserver bodies). For each, as the
median of ``--runs`` runs:

- wall: the whole diff of every consecutive pair, as the CLI does it (load both sides from
  their directories, check the CRDs' shape, compare), on two cores shared by two processes
  where the input is large enough (upgrade_guard/diffing.py), each run in a fresh process
  (as the CLI, less interpreter start and imports);
- floor: reading the same bytes and nothing else, with the fastest reader that reads them
  as Kubernetes does: ``orjson.loads`` for JSON (which the JSON reader takes where orjson
  reads as Go does, as it does here), our YAML reader (load/yaml_reader) for YAML;
- cpu: the same as CPU time, both processes', less disturbed by other load on the machine;
- 1 proc: wall in one process, as on one core (the hook's container);
- compare: ``engine.compare_crds`` alone, on CRD sets loaded beforehand;
- x floor: wall / floor, what the rest of the run costs over parsing;
- libyaml: the YAML floor without the rapidyaml fast path (what dropping it would cost).

The floor, compare and libyaml figures are medians of runs in one fresh process.

The package's bytecode is written first, as pip writes it when it installs: the CEL checks'
modules are imported inside the timed diff, on the first schema holding rules, and without
bytecode (a fresh checkout with PYTHONDONTWRITEBYTECODE set) each process would compile them
from source, which a user's run does not.

Last, a stream of 400 and of 4,000 small documents is read by the fast path alone and by
libyaml alone: ten times the documents should take about ten times as long.

Memory is measured on another fresh subprocess diffing every pair once: "RSS MiB" is its
peak RSS, plus that of its child where the diff is shared ("+" between them); "PSS MiB" is the
highest sum of both processes' proportional set size, read from /proc every 20 ms (pages the
child shares with the parent, such as the interpreter's, count once). Tags are taken in the
order of SOURCE.txt's "tags taken". Targets (issue 14): the provider-upjet-aws pair under
5 s from YAML and 2 s from JSON, the memory of both processes not above the peak RSS measured
before (315 MiB).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import gc
import itertools
import json
import multiprocessing
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))

from upgrade_guard import diffing, engine, judging  # noqa: E402
from upgrade_guard.load.crds import crds_from  # noqa: E402
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, load_documents  # noqa: E402
from upgrade_guard.load.fast_yaml import read_fast  # noqa: E402
from upgrade_guard.load.yaml_reader import (  # noqa: E402
    MAX_DEPTH,
    plain_differs,
    read_documents,
    read_documents_faithful,
)
from upgrade_guard.policy import DEFAULT_POLICY  # noqa: E402

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


def projects(corpus: Path, names: list[str] | None) -> list[Path]:
    """The corpus's projects (a folder with SOURCE.txt), only those named where names are
    given."""
    found = sorted(p for p in corpus.iterdir() if (p / "SOURCE.txt").is_file())
    return [p for p in found if p.name in names] if names else found


def _pairs(project: Path) -> list[tuple[Path, Path]]:
    return list(itertools.pairwise(tags(project)))


def median_time(
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
        compared = diffing.read_and_compare(str(old), str(new), DEFAULT_MAX_BYTES, DEFAULT_POLICY)
        judging.judge(compared.changes)


@contextlib.contextmanager
def _one_process() -> Iterator[None]:
    threshold = diffing.TWO_PROCESSES_FROM_BYTES
    diffing.TWO_PROCESSES_FROM_BYTES = sys.maxsize
    try:
        yield
    finally:
        diffing.TWO_PROCESSES_FROM_BYTES = threshold


def _workers_ended() -> None:
    """Waits for the diff's worker, which the diff does not wait for: a child's CPU time and
    peak RSS count once it has ended."""
    for worker in multiprocessing.active_children():
        worker.join()


def _cpu_time() -> float:
    """CPU time of this process and of its children that ended (each diff's child)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _peak_rss_mib() -> tuple[float, float]:
    """This process's peak RSS, and that of its largest child."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0  # the process ended between two readings


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(child) for child in listed.read().split()]
    except OSError:
        return []


def _memory(project: Path) -> dict[str, Any]:
    """Peak RSS of a fresh process diffing every pair (and of its child), and the highest
    sum of both processes' PSS, sampled."""
    command = [sys.executable, __file__, "--rss-worker", str(project)]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    highest = 0
    while worker.poll() is None:
        total = sum(_pss_kib(pid) for pid in [worker.pid, *_children(worker.pid)])
        highest = max(highest, total)
        time.sleep(0.02)
    output, _ = worker.communicate()
    if worker.returncode != 0:
        raise SystemExit(f"bench: memory of {project} not measured")
    own, child = json.loads(output.strip().splitlines()[-1])
    return {"peak_rss_mib": own, "child_rss_mib": child, "peak_pss_mib": highest / 1024}


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
                orjson.loads(data)
            else:
                for _ in read_documents(data):
                    pass

    def without_fast_path() -> None:
        for data in contents:
            for _ in read_documents_faithful(data):
                pass

    parse = median_time(runs, floor)
    libyaml = float("nan") if json_input else median_time(runs, without_fast_path)
    loaded = {side: crds_from(load_documents(str(side))) for pair in steps for side in pair}

    def compare_all() -> None:
        for old, new in steps:
            engine.compare_crds(loaded[old], loaded[new])

    compare = median_time(runs, compare_all)
    return {
        "pairs": len(steps),
        "mb_read": sum(map(len, contents)) / 1e6,
        "floor_s": parse,
        "libyaml_s": libyaml,
        "compare_s": compare,
    }


def _diff_once(project: Path, one_process: bool) -> dict[str, float]:
    """Wall and CPU of diffing every pair once, in this fresh process (as the CLI does it,
    less interpreter start and imports)."""
    with _one_process() if one_process else contextlib.nullcontext():
        wall, cpu = time.perf_counter(), _cpu_time()
        _diff_all(_pairs(project))
        wall = time.perf_counter() - wall
        _workers_ended()
        return {"wall_s": wall, "cpu_s": _cpu_time() - cpu}


def _fresh_runs(project: Path, runs: int) -> dict[str, float]:
    """Medians over runs fresh processes: wall and CPU as the CLI runs it, wall in one."""
    shared = [_worker("--diff-once", project, 1) for _ in range(runs)]
    alone = [_worker("--diff-once-in-one", project, 1) for _ in range(runs)]
    return {
        "wall_s": statistics.median(run["wall_s"] for run in shared),
        "cpu_s": statistics.median(run["cpu_s"] for run in shared),
        "one_process_s": statistics.median(run["wall_s"] for run in alone),
    }


def _worker(mode: str, project: Path, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, mode, str(project), "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: {project} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _rss(row: dict[str, Any]) -> str:
    own = f"{row['peak_rss_mib']:.0f}"
    return f"{own}+{row['child_rss_mib']:.0f}" if row["child_rss_mib"] else own


def _line(row: dict[str, Any]) -> str:
    ratio = row["wall_s"] / row["floor_s"] if row["floor_s"] else float("nan")
    return (
        f"{row['project']:<22} {row['input']:<5} {row['pairs']:>5} {row['mb_read']:>8.1f}"
        f" {row['wall_s']:>8.2f} {row['cpu_s']:>8.2f} {row['one_process_s']:>8.2f}"
        f" {row['floor_s']:>8.2f} {ratio:>8.1f}"
        f" {row['compare_s']:>8.2f} {row['libyaml_s']:>8.2f} {_rss(row):>12}"
        f" {row['peak_pss_mib']:>8.0f}"
    )


def small_documents(count: int, runs: int) -> tuple[float, float]:
    """Seconds to read a stream of count small documents: fast path, libyaml alone."""
    data = b"".join(b"---\nkind: A\nname: n%d\nspec: {a: [1, 2]}\n" % i for i in range(count))
    fast = median_time(runs, lambda: read_fast(data, MAX_DEPTH, plain_differs))
    libyaml = median_time(runs, lambda: list(read_documents_faithful(data)))
    return fast, libyaml


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3, help="runs per median (default 3)")
    parser.add_argument("--project", action="append", help="only these projects")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rss-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--diff-once", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--diff-once-in-one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    gc.disable()  # as upgrade_guard.cli.main runs every command
    if args.worker:
        print(json.dumps(measure(args.worker, args.runs)))
        return 0
    if args.diff_once or args.diff_once_in_one:
        once = _diff_once(args.diff_once or args.diff_once_in_one, bool(args.diff_once_in_one))
        print(json.dumps(once))
        return 0
    if args.rss_worker:
        _diff_all(_pairs(args.rss_worker))
        _workers_ended()
        print(json.dumps(_peak_rss_mib()))
        return 0
    compileall.compile_dir(REPO / "hook", quiet=1)
    if not args.corpus.is_dir():
        print(f"bench: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    print(f"medians of {args.runs} runs; each project and input in a fresh process; seconds")
    print(
        f"{'project':<22} {'input':<5} {'pairs':>5} {'MB read':>8} {'wall':>8} {'cpu':>8}"
        f" {'1 proc':>8}"
        f" {'floor':>8} {'x floor':>8} {'compare':>8} {'libyaml':>8} {'RSS MiB':>12}"
        f" {'PSS MiB':>8}"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="ug-bench-json-") as scratch:
        for project in projects(args.corpus, args.project):
            for kind in INPUTS:
                source = project if kind == "yaml" else as_json(project, Path(scratch))
                row = {"project": project.name, "input": kind}
                row.update(_worker("--worker", source, args.runs))
                row.update(_fresh_runs(source, args.runs))
                row.update(_memory(source))
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
            (f"provider pair, {kind}, peak PSS", row["peak_pss_mib"], target_mib, "MiB")
        )
    print()
    for name, value, limit, unit in verdicts:
        status = "ok" if value <= limit else "MISSED"
        print(f"{name:<34} {value:>9.2f} {unit:<3} target <= {limit:.2f} {unit:<3} {status}")
    return 0 if all(value <= limit for _, value, limit, _ in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
