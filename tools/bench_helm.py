"""Benchmark: what the guard adds where the person waits (issue 37, items 3 and 4).

On a fresh control plane with the Job runner (tools/testenv: the real kube-apiserver and
helm, the hook's image under bwrap), for the example chart 3.0.0 and for cert-manager v1.19.0
adopted by docs/chart-adoption.md's steps, each installed once:

- a no-op ``helm upgrade`` with its hooks against the same with ``--no-hooks``;
- ``helm guard upgrade`` against ``helm upgrade --dry-run=server`` with the same flags;

alternating, ``--runs`` times each; printed: the medians, their difference and ratio. The
guard's share of a hooked upgrade is broken down by the Job runner's clock: Helm until the
guard's Job runs (rendering, the hook objects before it), the Job's run (process start and
imports, then the checks, whose time the hook reports), and Helm after it ends.

With ``--baseline OTHER/.venv/bin`` (another checkout's installed command, say the tree
before a change), ``helm guard upgrade`` is timed with that ``upgrade-guard`` too, in the same
turns, as a "before" figure.

Run: ``.venv/bin/python tools/bench_helm.py [--runs 5] [--baseline DIR]``
(tools/kube-testenv/build.sh and tools/image/build.sh first). Timing is noisy on a shared
2-core host: compare medians.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "tests" / "cluster"))
sys.path.insert(0, str(REPO / "tests"))

from testenv import ControlPlane, find_binaries  # noqa: E402
from testenv.__main__ import chart_default_image  # noqa: E402
from testenv.egress import without_proxies  # noqa: E402
from testenv.jobrunner import JobRunner  # noqa: E402
from testenv.kubelet import FakeKubelet  # noqa: E402
from testenv.sandbox import GUARD_IMAGE, built_guard_image  # noqa: E402

VENV_BIN = REPO / ".venv" / "bin"
_CHECKS = re.compile(r"in \d+ requests; ([0-9.]+)s")


@dataclass
class JobClock:
    """When each Job started and ended, by the runner's word, on this process's clock."""

    started: list[float] = field(default_factory=list)
    ended: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def say(self, line: str) -> None:
        now = time.monotonic()
        with self.lock:
            if line.endswith(": started"):
                self.started.append(now)
            elif ", exit code " in line:
                self.ended.append(now)


@dataclass
class Case:
    name: str
    release: str
    chart: str
    flags: tuple[str, ...]


def _timed(
    command: list[str], env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return time.monotonic() - start, done


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def bench(
    case: Case, env: dict[str, str], clock: JobClock, runs: int, helm: str, baseline: Path | None
) -> None:
    base = [helm, "upgrade", case.release, case.chart, *case.flags]
    hooked: list[float] = []
    bare: list[float] = []
    guard: list[float] = []
    dry: list[float] = []
    before: list[float] = []
    job: list[float] = []
    after: list[float] = []
    checks: list[float] = []
    guard_before: list[float] = []
    env_before = {**env, "PATH": os.pathsep.join([str(baseline), env["PATH"]])} if baseline else {}
    for _ in range(runs):
        with clock.lock:
            clock.started.clear()
            clock.ended.clear()
        start = time.monotonic()
        took, done = _timed(base, env)
        assert done.returncode == 0, done.stderr[-2000:]
        hooked.append(took)
        with clock.lock:
            if clock.started and clock.ended:
                before.append(clock.started[0] - start)
                job.append(clock.ended[-1] - clock.started[0])
                after.append(start + took - clock.ended[-1])
        found = _CHECKS.findall(done.stderr)
        if found:
            checks.append(float(found[-1]))
        took, done = _timed([*base, "--no-hooks"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        bare.append(took)
        took, done = _timed([helm, "guard", *base[1:]], env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        guard.append(took)
        if baseline:
            took, done = _timed([helm, "guard", *base[1:]], env_before)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            guard_before.append(took)
        took, done = _timed([*base, "--dry-run=server"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        dry.append(took)
    m = {k: _median(v) for k, v in (("hooked", hooked), ("bare", bare), ("guard", guard),
                                    ("dry", dry), ("before", before), ("job", job),
                                    ("after", after), ("checks", checks),
                                    ("guard_before", guard_before))}  # fmt: skip
    print(f"\n{case.name} (median of {runs})")
    print(f"  helm upgrade            {m['hooked']:6.2f} s   --no-hooks {m['bare']:6.2f} s"
          f"   the guard adds {m['hooked'] - m['bare']:5.2f} s")  # fmt: skip
    print(f"    until the Job runs    {m['before']:6.2f} s   (render, the hook objects before it)")
    print(f"    the Job               {m['job']:6.2f} s   of which the checks {m['checks']:.2f} s"
          " (the rest: process start, imports, report)")  # fmt: skip
    print(f"    after it ends         {m['after']:6.2f} s   (Helm sees it done, applies)")
    print(f"  helm guard upgrade      {m['guard']:6.2f} s   --dry-run=server {m['dry']:6.2f} s"
          f"   ratio {m['guard'] / m['dry']:.2f}")  # fmt: skip
    if baseline:
        print(f"    with {baseline}/upgrade-guard {m['guard_before']:6.2f} s"
              f"   ratio {m['guard_before'] / m['dry']:.2f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout's .venv/bin")
    args = parser.parse_args()
    if args.baseline and not (args.baseline / "upgrade-guard").is_file():
        print(f"--baseline {args.baseline}: no upgrade-guard there", file=sys.stderr)
        return 2
    binaries = find_binaries()
    image = built_guard_image()
    if binaries.missing() or image is None:
        print("build first: tools/kube-testenv/build.sh and tools/image/build.sh", file=sys.stderr)
        return 1
    clock = JobClock()
    with tempfile.TemporaryDirectory(prefix="bench-helm-") as scratch, ControlPlane(binaries) as cp:
        assert cp.workdir is not None
        kubelet = FakeKubelet(cp).start()
        runner = JobRunner(cp, kubelet, cp.workdir / "jobs",
                           images={GUARD_IMAGE: image, chart_default_image(): image},
                           path_prepend=[VENV_BIN, binaries.bin_dir], every_job=True,
                           say=clock.say).start()  # fmt: skip
        try:
            env = without_proxies()
            env["KUBECONFIG"] = str(cp.admin_kubeconfig)
            env["PATH"] = os.pathsep.join([str(VENV_BIN), str(binaries.bin_dir), env["PATH"]])
            for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
                env[var] = str(Path(scratch) / var.lower())
            helm = str(binaries.helm)
            install = [helm, "plugin", "install", str(REPO / "helm-guard")]
            plugin = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
            assert plugin.returncode == 0, plugin.stderr
            from test_cert_manager import adopt  # the docs' adoption steps, as the tests take them

            cert_manager = str(adopt("v1.19.0", Path(scratch) / "cert-manager", env))
            cases = [
                Case("example 3.0.0", "rel", str(REPO / "chart-snippets/example/3.0.0"),
                     ("-n", "bench-example")),
                Case("cert-manager v1.19.0 (adopted)", "cm", cert_manager,
                     ("-n", "bench-cm", "--set", "crds.enabled=true",
                      "--set", "startupapicheck.enabled=false")),
            ]  # fmt: skip
            for case in cases:
                namespace = case.flags[1]
                subprocess.run([str(binaries.kubectl), "create", "namespace", namespace],
                               env=env, capture_output=True, check=True)  # fmt: skip
                _, done = _timed([helm, "install", case.release, case.chart, *case.flags], env)
                assert done.returncode == 0, done.stderr[-2000:]
                bench(case, env, clock, args.runs, helm, args.baseline)
        finally:
            runner.stop()
            kubelet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
