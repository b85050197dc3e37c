"""Benchmark: diff every consecutive release pair of ../shared/corpus, per project.

Run: ``.venv/bin/python tools/bench.py [--runs 3] [--project NAME ...] [--corpus DIR]``

Each project is timed in a fresh subprocess: the whole diff of every consecutive pair
(load both CRD sets from their directories, as the CLI does, then compare), parse-only
(reading the same files' YAML into documents, nothing else) and compare-only
(``engine.compare_crds`` on CRD sets loaded beforehand), each the median of ``--runs``
runs; "other" in the wall time is the CRD shape checks (``crds_from``). Peak RSS is that
of another fresh subprocess diffing every pair once. Tags are taken in the order of
SOURCE.txt's "tags taken".
Targets (issue 2): all projects but provider-upjet-aws under 10 s in all; the provider
pair under 20 s and 2 GiB peak RSS; comparing cheaper than parsing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))

from upgrade_guard import engine  # noqa: E402
from upgrade_guard.load.crds import crds_from  # noqa: E402
from upgrade_guard.load.documents import load_documents  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
PROVIDER = "provider-upjet-aws"
TARGET_CORPUS_S = 10.0
TARGET_PROVIDER_S = 20.0
TARGET_PROVIDER_RSS_MIB = 2048.0


def tags(project: Path) -> list[Path]:
    """Tag directories in SOURCE.txt order ("tags taken", oldest first)."""
    text = (project / "SOURCE.txt").read_text()
    section = text.split("tags taken", 1)[1]
    names = re.findall(r"^\s*-\s+(\S+)\s+commit", section, flags=re.MULTILINE)
    return [project / name for name in names if (project / name).is_dir()]


def pairs(project: Path) -> list[tuple[Path, Path]]:
    found = tags(project)
    return list(itertools.pairwise(found))


def _median_time(runs: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _diff_all(steps: list[tuple[Path, Path]]) -> None:
    for old, new in steps:
        engine.compare_crds(
            crds_from(load_documents(str(old))), crds_from(load_documents(str(new)))
        )


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(project: Path, runs: int) -> dict[str, Any]:
    """The times for one project, in this process."""
    steps = pairs(project)
    size = sum(f.stat().st_size for a, b in steps for d in (a, b) for f in d.rglob("*.yaml"))

    def parse_all() -> None:
        for old, new in steps:
            for side in (old, new):
                for _ in load_documents(str(side)):
                    pass

    wall = _median_time(runs, lambda: _diff_all(steps))
    parse = _median_time(runs, parse_all)
    loaded = {side: crds_from(load_documents(str(side))) for pair in steps for side in pair}

    def compare_all() -> None:
        for old, new in steps:
            engine.compare_crds(loaded[old], loaded[new])

    compare = _median_time(runs, compare_all)
    return {
        "project": project.name,
        "pairs": len(steps),
        "mb_parsed": size / 1e6,
        "wall_s": wall,
        "parse_s": parse,
        "compare_s": compare,
    }


def _worker(mode: str, project: Path, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, mode, str(project), "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: {project.name} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _in_subprocess(project: Path, runs: int) -> dict[str, Any]:
    """Times from one fresh process; the peak RSS of diffing every pair once from another."""
    row = _worker("--worker", project, runs)
    row.update(_worker("--rss-worker", project, runs))
    return row


def _line(row: dict[str, Any]) -> str:
    ratio = row["compare_s"] / row["parse_s"] if row["parse_s"] else float("nan")
    return (
        f"{row['project']:<22} {row['pairs']:>5} {row['mb_parsed']:>8.1f} {row['wall_s']:>8.2f}"
        f" {row['parse_s']:>8.2f} {row['compare_s']:>8.2f} {ratio:>8.2f}"
        f" {row['peak_rss_mib']:>9.0f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3, help="runs per median (default 3)")
    parser.add_argument("--project", action="append", help="only these projects")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rss-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.worker, args.runs)))
        return 0
    if args.rss_worker:
        _diff_all(pairs(args.rss_worker))
        print(json.dumps({"peak_rss_mib": _peak_rss_mib()}))
        return 0
    if not args.corpus.is_dir():
        print(f"bench: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    projects = sorted(p for p in args.corpus.iterdir() if (p / "SOURCE.txt").is_file())
    if args.project:
        projects = [p for p in projects if p.name in args.project]
    print(f"medians of {args.runs} runs; each project in a fresh process; times in seconds")
    print(
        f"{'project':<22} {'pairs':>5} {'MB read':>8} {'wall':>8} {'parse':>8} {'compare':>8}"
        f" {'cmp/prs':>8} {'RSS MiB':>9}"
    )
    rows = []
    for project in projects:
        row = _in_subprocess(project, args.runs)
        rows.append(row)
        print(_line(row), flush=True)
    others = [r for r in rows if r["project"] != PROVIDER]
    provider = [r for r in rows if r["project"] == PROVIDER]
    verdicts = []
    if others:
        total = {
            key: sum(r[key] for r in others)
            for key in ("pairs", "mb_parsed", "wall_s", "parse_s", "compare_s")
        }
        total.update(
            project="total (no provider)", peak_rss_mib=max(r["peak_rss_mib"] for r in others)
        )
        print(_line(total))
        verdicts.append(("all but provider, wall", total["wall_s"], TARGET_CORPUS_S, "s"))
        verdicts.append(
            ("all but provider, compare < parse", total["compare_s"], total["parse_s"], "s")
        )
    for row in provider:
        verdicts.append(("provider pair, wall", row["wall_s"], TARGET_PROVIDER_S, "s"))
        verdicts.append(
            ("provider pair, peak RSS", row["peak_rss_mib"], TARGET_PROVIDER_RSS_MIB, "MiB")
        )
        verdicts.append(("provider pair, compare < parse", row["compare_s"], row["parse_s"], "s"))
    print()
    for name, value, limit, unit in verdicts:
        status = "ok" if value < limit else "MISSED"
        print(f"{name:<36} {value:>9.2f} {unit:<3} target < {limit:.2f} {unit:<3} {status}")
    return 0 if all(value < limit for _, value, limit, _ in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
