"""Benchmark: our ``diff`` against crdify on corpus release pairs, measured in the same run.

Run: ``.venv/bin/python tools/bench_crdify.py [--runs 5] [--pair PROJECT/OLD/NEW ...]
[--project NAME ...] [--corpus DIR] [--baseline DIR]``

crdify (sigs.k8s.io/crdify, built by tools/crdify/build.sh at the version go.mod pins there)
compares one CRD per run: ``crdify file://OLD file://NEW``. A release pair is compared as it
must be with it: one run per CRD both tags hold (the corpus holds one CRD per file, named by
the CRD), two runs at a time (two cores), the whole timed from the first start to the last
exit. A CRD only one side holds is not given to crdify (it has nothing to compare it with);
our ``diff`` still reads and checks it. Ours is the command line as a user runs it:
``upgrade-guard diff OLD NEW`` on the two tag directories, text report, in a fresh process.
Both times are from process start to exit, so both pay their start-up.

Without ``--pair`` or ``--project``, the pairs are those issue 37 names. ``--project`` takes
every consecutive pair of a project (tags in SOURCE.txt order). The two tools take turns,
``--runs`` times, so that other load on the machine falls on both alike; the table gives the
median wall time of each, crdify's over ours (the target is 2 or more on every pair), and
the median CPU time (user and system, all processes) of each, which other load disturbs less.
With ``--baseline OTHER/hook`` (another checkout's package, say the tree before a change),
that tree's diff is timed too, in the same turns, as a "before" column.
Exit status 0 always (a figure, not a check); 2 on bad arguments or a tool's failure.

The package's bytecode is written first, as pip writes it when it installs.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

from bench import DEFAULT_CORPUS, tags  # noqa: E402

GUARD = str(Path(sys.executable).parent / "upgrade-guard")
BUILD = REPO / "tools" / "crdify" / "build.sh"
ISSUE_PAIRS = (
    "provider-upjet-aws/v1.23.0/v2.0.0",
    "prometheus-operator/v0.85.0/v0.90.0",
    "cert-manager/v1.18.0/v1.19.0",
)
PARALLEL = 2
TARGET_RATIO = 2.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str], env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env
    )
    if done.returncode not in (0, 1):  # 1: each tool's "found a breaking change"
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()}")


def timed(work: list[list[str]], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of running the commands, PARALLEL at a time."""
    cpu, start = _cpu(), time.perf_counter()
    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(lambda command: _run(command, env), work))
    return time.perf_counter() - start, _cpu() - cpu


def crd_files(tag: Path) -> dict[str, Path]:
    return {f.stem: f for f in sorted(tag.iterdir()) if f.suffix in (".yaml", ".yml")}


def pairs_of(corpus: Path, args: argparse.Namespace) -> list[tuple[Path, Path]]:
    found = [
        (corpus / project / old, corpus / project / new)
        for project, old, new in (spec.split("/") for spec in args.pair or [])
    ]
    for project in args.project or []:
        found.extend(itertools.pairwise(tags(corpus / project)))
    if not found:
        found = pairs_of(corpus, argparse.Namespace(pair=ISSUE_PAIRS, project=None))
    for side in (side for pair in found for side in pair):
        if not side.is_dir():
            raise SystemExit(f"bench_crdify: no tag directory {side}")
    return found


def crdify_bin() -> str:
    built = subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)
    if built.returncode != 0:
        raise SystemExit(f"bench_crdify: {BUILD} failed:\n{built.stdout}{built.stderr}")
    return str(Path(built.stdout.strip().splitlines()[-1]) / "crdify")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument("--pair", action="append", help="PROJECT/OLD_TAG/NEW_TAG")
    parser.add_argument("--project", action="append", help="every consecutive pair of NAME")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout's hook/ directory: its diff is timed in the same turns (before)",
    )
    args = parser.parse_args()
    crdify = crdify_bin()
    compileall.compile_dir(REPO / "hook", quiet=1)
    tools: dict[str, dict[str, str] | None] = {"crdify": None, "ours": None}
    if args.baseline:
        compileall.compile_dir(args.baseline, quiet=1)
        tools["before"] = {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}
    before = os.getloadavg()
    print(f"medians of {args.runs} runs each, the tools taking turns; seconds")
    print(
        f"{'pair':<40} {'CRDs old/new/both':>14} {'crdify':>9} {'ours':>8} {'ratio':>6}"
        f" {'crdify CPU':>10} {'ours CPU':>8} {'ratio':>6}"
        + (f" {'before':>8} {'ratio':>6} {'bef. CPU':>8}" if args.baseline else "")
    )
    rows = []
    for old, new in pairs_of(args.corpus, args):
        old_crds, new_crds = crd_files(old), crd_files(new)
        both = sorted(old_crds.keys() & new_crds.keys())
        theirs = [[crdify, f"file://{old_crds[n]}", f"file://{new_crds[n]}"] for n in both]
        ours = [[GUARD, "diff", str(old), str(new)]]
        times: dict[str, list[tuple[float, float]]] = {tool: [] for tool in tools}
        for _ in range(args.runs):
            for tool, env in tools.items():
                times[tool].append(timed(theirs if tool == "crdify" else ours, env))
        wall = {tool: statistics.median(t[0] for t in runs) for tool, runs in times.items()}
        cpu = {tool: statistics.median(t[1] for t in runs) for tool, runs in times.items()}
        name = f"{old.parent.name} {old.name} -> {new.name}"
        counts = f"{len(old_crds)}/{len(new_crds)}/{len(both)}"
        rows.append((name, wall))
        print(
            f"{name:<40} {counts:>14} {wall['crdify']:>9.2f} {wall['ours']:>8.2f}"
            f" {wall['crdify'] / wall['ours']:>6.2f} {cpu['crdify']:>10.2f} {cpu['ours']:>8.2f}"
            f" {cpu['crdify'] / cpu['ours']:>6.2f}"
            + (
                f" {wall['before']:>8.2f} {wall['crdify'] / wall['before']:>6.2f}"
                f" {cpu['before']:>8.2f}"
                if args.baseline
                else ""
            ),
            flush=True,
        )
    load = " -> ".join(" ".join(f"{x:.2f}" for x in avg) for avg in (before, os.getloadavg()))
    print(f"load average {load}")
    missed = [name for name, wall in rows if wall["crdify"] / wall["ours"] < TARGET_RATIO]
    print(f"ratio crdify/ours under {TARGET_RATIO}: {', '.join(missed) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
