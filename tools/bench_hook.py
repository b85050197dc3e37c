"""Benchmark: `upgrade-guard hook` end to end, process start included, against the real
apiserver holding the live CRDs (tools/testenv; build it first with
tools/kube-testenv/build.sh).

Run: ``.venv/bin/python tools/bench_hook.py [--runs 3] [--case NAME ...]``

For each case the older release's CRDs are created in a fresh control plane, each of their
resources is requested once (as the operator's own watches would have), and, once it is
quiet again (it rebuilds its OpenAPI documents for minutes after a thousand CRDs), the hook
is run ``--runs`` times with the newer release as the chart, read from its YAML directory
and from a gzip bundle of minified JSON (what a chart carries). Printed per input: the
median wall time, the peak RSS of the hook process, and, measured in the same run as the
baseline, the median time ``kubectl get crd -o json`` takes for the same live CRDs, with
the ratio, and the hook's CPU time (user + system), which a busy machine disturbs less.
Targets (issue 7): prometheus-operator under 1.5 s; provider-upjet-aws v1.23.0
live -> v2.0.0 chart under 15 s and 512 MiB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))
sys.path.insert(0, str(REPO / "tools"))

from testenv import ControlPlane, KubeError, find_binaries  # noqa: E402
from upgrade_guard.load.crds import crds_from  # noqa: E402
from upgrade_guard.load.documents import load_documents  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
CASES = {
    "prometheus-operator": ("v0.85.0", "v0.90.0"),
    "provider-upjet-aws": ("v1.23.0", "v2.0.0"),
}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
UPGRADE_GUARD = str(Path(sys.executable).with_name("upgrade-guard"))


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MiB, CPU seconds) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{argv[:2]} failed ({process.returncode}): {process.stderr.read()!r}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def create_live(plane: ControlPlane, directory: Path) -> int:
    crds = crds_from(load_documents(str(directory)))
    bodies = []
    for crd in crds.values():
        body = json.loads(json.dumps(dict(crd.raw)))
        body.pop("status", None)
        body["metadata"] = {"name": crd.name, **{k: v for k, v in body["metadata"].items()
                                                 if k in ("annotations", "labels")}}  # fmt: skip
        bodies.append(body)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda body: plane.admin.create(CRDS, body), bodies))
        # The apiserver sets up a custom resource's handler (storage, schema, CEL) on the
        # first request for it, about 20 ms of its CPU each; in a cluster the operator's own
        # watches have long done that, so it is done here before the hook is timed.
        list(pool.map(lambda body: _first_request(plane, _resources(body)), bodies))
    return len(bodies)


def _first_request(plane: ControlPlane, path: str) -> None:
    """A list of one at path, once the CRD is established (until then it is a 404)."""
    deadline = time.monotonic() + 300
    while True:
        try:
            plane.admin.get(path, limit=1)
            return
        except KubeError as error:
            if error.code != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _resources(crd: dict[str, Any]) -> str:
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("storage"))
    return f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"


def settle(plane: ControlPlane, window: float = 5.0, busy: float = 0.25) -> float:
    """Seconds until the control plane is quiet (under ``busy`` of a core over ``window``).

    After a thousand CRDs are created the apiserver rebuilds its OpenAPI documents for
    minutes, on the same two cores as the hook; a cluster the hook meets has had its CRDs
    for a while, so the hook is timed once that is over. Holding a thousand CRDs, it stays
    at about a tenth of a core even when nothing asks it anything."""
    started = time.monotonic()
    used = plane.cpu_seconds()
    while time.monotonic() - started < 900:
        time.sleep(window)
        now = plane.cpu_seconds()
        if now - used < busy * window:
            break
        used = now
    return time.monotonic() - started


def bundle(directory: Path, out: Path) -> Path:
    crds = crds_from(load_documents(str(directory)))
    items = [dict(crd.raw) for crd in crds.values()]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, separators=(",", ":"))
    out.write_bytes(gzip.compress(text.encode(), 9))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    binaries = find_binaries()
    if binaries.missing():
        raise SystemExit("build the control plane first: tools/kube-testenv/build.sh")
    print(f"{'case':<22} {'chart input':<12} {'CRDs':>5} {'hook s':>7} {'RSS MiB':>8}"
          f" {'kubectl s':>9} {'ratio':>6} {'hook cpu s':>10}")  # fmt: skip
    for case in args.case or list(CASES):
        old, new = CASES[case]
        with ControlPlane(binaries) as plane, tempfile.TemporaryDirectory() as scratch:
            live = create_live(plane, CORPUS / case / old)
            print(f"{case}: control plane quiet {settle(plane):.0f} s after creating the CRDs",
                  file=sys.stderr, flush=True)  # fmt: skip
            env = {**os.environ, "KUBECONFIG": str(plane.admin_kubeconfig)}
            kubectl = [str(binaries.kubectl), "get", "crd", "-o", "json"]
            inputs = {
                "yaml dir": str(CORPUS / case / new),
                "gz bundle": str(bundle(CORPUS / case / new, Path(scratch) / "crds.json.gz")),
            }
            for label, chart in inputs.items():
                argv = [UPGRADE_GUARD, "hook", "--crds", chart, "--timeout", "120"]
                runs = [timed(argv, env) for _ in range(args.runs)]
                base = [timed(kubectl, env)[0] for _ in range(args.runs)]
                wall = statistics.median(r[0] for r in runs)
                rss = max(r[1] for r in runs)
                cpu = statistics.median(r[2] for r in runs)
                floor = statistics.median(base)
                print(f"{case:<22} {label:<12} {live:>5} {wall:>7.2f} {rss:>8.0f}"
                      f" {floor:>9.2f} {wall / floor:>6.2f} {cpu:>10.2f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
