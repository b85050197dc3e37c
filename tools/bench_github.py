"""What --output github's file/line placement costs: diff of corpus release pairs with
--output json (the baseline) and --output github, each as its own process, median wall of 3
runs and peak RSS, and the ratio github/json measured in the same run.

    .venv/bin/python tools/bench_github.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
PAIRS = [
    ("prometheus-operator", "v0.85.0", "v0.90.0"),
    ("cert-manager", "v1.18.0", "v1.19.0"),
    (
        "provider-upjet-aws",
        *sorted(p.name for p in (CORPUS / "provider-upjet-aws").iterdir() if p.is_dir())[-2:],
    ),
]
RUNS = 3


_CHILD = """
import resource, runpy, sys
sys.argv = ["upgrade-guard", *sys.argv[1:]]
try:
    runpy.run_module("upgrade_guard", run_name="__main__")
finally:
    sys.stderr.write(f"RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n")
"""


def once(old: Path, new: Path, output: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, annotations) of one diff process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, "diff", str(old), str(new), "--output", output],
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - started
    rss = int(done.stderr.decode().rsplit("RSS ", 1)[1]) / 1024
    return wall, rss, sum(line.startswith(b"::") for line in done.stdout.splitlines())


def main() -> None:
    print(
        "pair | annotations | json wall s | github wall s | github/json"
        " | json RSS MiB | github RSS MiB"
    )
    for project, old, new in PAIRS:
        base = CORPUS / project
        figures = {}
        for output in ("json", "github"):
            runs = [once(base / old, base / new, output) for _ in range(RUNS)]
            figures[output] = (
                statistics.median(r[0] for r in runs),
                max(r[1] for r in runs),
                runs[0][2],
            )
        (jw, jr, _), (gw, gr, count) = figures["json"], figures["github"]
        print(
            f"{project} {old}->{new} | {count} | {jw:.2f} | {gw:.2f} | {gw / jw:.2f}"
            f" | {jr:.0f} | {gr:.0f}"
        )


if __name__ == "__main__":
    main()
