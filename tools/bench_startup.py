"""Benchmark: how long the command line takes to start, against the interpreter's own start.

Run: ``.venv/bin/python tools/bench_startup.py [--runs 21]``

Each case runs ``--runs`` times in a fresh process, the cases taking turns so that other
load on the machine falls on all of them alike, and the median wall time of each is printed
beside its excess over ``python -c pass`` (the same interpreter, measured in the same run),
then the same for CPU time (user and system), which other load disturbs less:

- ``python -c pass``: the interpreter's start, the floor;
- ``--version``: the command line's start (target: within 0.1 s of the floor);
- one-CRD ``diff``: the bundled example's 1.0.0 -> 2.0.0, a whole run with its report
  (target: within 0.2 s of the floor).

The package's bytecode is written first, as pip writes it when it installs: without it (a
fresh checkout with PYTHONDONTWRITEBYTECODE set) every run would compile the whole package
again, which a user's run does not. The load average is printed before and after, and beside
each median the fastest run's excess over the fastest ``python -c pass``: on a busy machine
the run other load disturbed least.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "chart-snippets" / "example-operator"
GUARD = str(Path(sys.executable).parent / "upgrade-guard")
CASES: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "upgrade-guard --version": [GUARD, "--version"],
    "upgrade-guard diff (1 CRD)": [GUARD, "diff", str(EXAMPLE / "crds" / "1.0.0")]
    + [str(EXAMPLE / "crds" / "2.0.0"), "--policy", str(EXAMPLE / "policy.yaml")],
}
TARGETS = {"upgrade-guard --version": 0.1, "upgrade-guard diff (1 CRD)": 0.2}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run in a fresh process."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.decode()}")
    return elapsed, _cpu() - cpu


def table(title: str, times: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor, fastest_floor = medians["python -c pass"], min(times["python -c pass"])
    print(
        f"{title:<28} {'median s':>9} {'over python s':>14} {'x python':>9}"
        f" {'fastest over s':>15}  target"
    )
    for name, median in medians.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else f"<= {target} s over: "
        if target is not None:
            verdict += "met" if median - floor <= target else "NOT met"
        fastest = min(times[name]) - fastest_floor
        print(
            f"{name:<28} {median:>9.3f} {median - floor:>14.3f} {median / floor:>9.1f}"
            f" {fastest:>15.3f}  {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    compileall.compile_dir(REPO / "hook", quiet=1)
    before = os.getloadavg()
    wall: dict[str, list[float]] = {name: [] for name in CASES}
    cpu: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(runs):
        for name, command in CASES.items():
            elapsed, used = timed(command)
            wall[name].append(elapsed)
            cpu[name].append(used)
    load = " -> ".join(" ".join(f"{x:.2f}" for x in avg) for avg in (before, os.getloadavg()))
    print(f"medians of {runs} fresh processes each; load average {load}")
    table("wall", wall)
    print()
    table("CPU (user + system)", cpu)


if __name__ == "__main__":
    main()
