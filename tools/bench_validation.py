"""Benchmark: judge 10,000 stored Prometheus objects by prometheus-operator's Prometheus CRD
(with its CEL rules), and, in the same run, list the same objects from a real apiserver.

Run: ``.venv/bin/python tools/bench_validation.py [--objects 10000] [--runs 3]``

Objects are generated deterministically, shaped as real Prometheus resources are (image,
version, replicas or DaemonSet mode, selectors, resources, storage, retention, remote
write, tolerations, security context...), and stored in a throw-away kube-apiserver
(tools/testenv; needs ``tools/kube-testenv/build.sh``). Then, each the median of
``--runs``:

* apiserver list: a paged LIST (500 per page) of every object, nothing else;
* validator: :meth:`Judge.judge` on every object as listed, page by page (read-back,
  CREATE of a copy, label UPDATE, /status write), holding one page at a time;
* validator only: the same judging over the objects regenerated in-process (no HTTP).

Peak RSS is reported for the whole process; the validator holds one page and counters,
so memory does not grow with the number of objects (see the RSS after each pass).
Target (issue 9): the validator under 10 s for 10,000 objects.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hook"))
sys.path.insert(0, str(REPO / "tools"))

from testenv import CRDTrial, Kube, find_binaries  # noqa: E402
from testenv.controlplane import ControlPlane  # noqa: E402
from upgrade_guard.apiserver import judge  # noqa: E402
from upgrade_guard.load.crds import crds_from  # noqa: E402
from upgrade_guard.load.documents import load_documents  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "prometheus-operator"
CRD_NAME = "prometheuses.monitoring.coreos.com"
KUBE_VERSION = (1, 35)
PAGE = 500
TARGET_S = 10.0


def prometheus_crd() -> tuple[str, dict[str, Any]]:
    tag = sorted((p.name for p in CORPUS.iterdir() if p.is_dir()), key=_version_key)[-1]
    crds = crds_from(load_documents(str(CORPUS / tag)))
    return tag, dict(crds[CRD_NAME].raw)


def _version_key(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split("."))


def prometheus_objects(count: int, namespace: str) -> Iterator[dict[str, Any]]:
    """``count`` Prometheus resources as operators write them, deterministic."""
    rng = random.Random(9)
    for i in range(count):
        daemonset = rng.random() < 0.1
        spec: dict[str, Any] = {
            "image": f"quay.io/prometheus/prometheus:v2.{rng.randint(40, 55)}.0",
            "version": f"v2.{rng.randint(40, 55)}.0",
            "serviceAccountName": "prometheus",
            "podMonitorSelector": {"matchLabels": {"team": rng.choice("abcdef")}},
            "ruleSelector": {"matchLabels": {"role": "alert-rules"}},
            "ruleNamespaceSelector": {},
            "retention": rng.choice(["15d", "30d", "90d"]),
            "scrapeInterval": rng.choice(["15s", "30s", "1m"]),
            "evaluationInterval": "30s",
            "externalLabels": {"cluster": f"c{i % 17}", "region": rng.choice(["eu", "us"])},
            "resources": {
                "requests": {"cpu": f"{rng.randint(1, 8) * 250}m", "memory": "2Gi"},
                "limits": {"memory": f"{rng.randint(2, 16)}Gi"},
            },
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 2000},
            "tolerations": [
                {
                    "key": "dedicated",
                    "operator": "Equal",
                    "value": "monitoring",
                    "effect": "NoSchedule",
                }
            ],
            "remoteWrite": [
                {
                    "url": f"https://metrics-{i % 5}.example.com/api/v1/write",
                    "writeRelabelConfigs": [
                        {"sourceLabels": ["__name__"], "regex": "go_.*", "action": "drop"}
                    ],
                }
            ],
        }
        if daemonset:
            spec["mode"] = "DaemonSet"
        else:
            spec["replicas"] = rng.randint(1, 3)
            spec["shards"] = 1
            spec["serviceMonitorSelector"] = {"matchLabels": {"release": "prom"}}
            spec["storage"] = {
                "volumeClaimTemplate": {
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": f"{rng.randint(10, 500)}Gi"}},
                    }
                }
            }
        yield {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "Prometheus",
            "metadata": {"name": f"prom-{i:05d}", "namespace": namespace,
                         "labels": {"app": "prometheus"}},
            "spec": spec,
        }  # fmt: skip


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def median_of(runs: int, measure: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = measure()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def pages(kube: Kube, path: str) -> Iterator[list[dict[str, Any]]]:
    token = ""
    while True:
        query: dict[str, Any] = {"limit": PAGE}
        if token:
            query["continue"] = token
        listed = kube.get(path, **query)
        yield listed["items"]
        token = listed["metadata"].get("continue") or ""
        if not token:
            return


def judge_all(judged: judge.Judge, objects: Iterator[dict[str, Any]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for obj in objects:
        found = judged.judge(obj)
        counts["objects"] += 1
        counts["read changes"] += bool(found.read_changes)
        counts["create refused"] += found.create.refused
        counts["update refused"] += found.update.refused
        counts["status refused"] += found.status.refused
        counts["rules not evaluated"] += bool(found.create.not_evaluated)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tag, crd = prometheus_crd()
    storage = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    schema = storage["schema"]["openAPIV3Schema"]
    rules = sum(1 for line in str(schema).split("'rule': ")[1:])
    print(f"prometheus-operator {tag} {CRD_NAME} {storage['name']}: {rules} CEL rules")
    namespace = "bench"
    binaries = find_binaries()
    if binaries.missing():
        print(f"missing {', '.join(binaries.missing())}: run tools/kube-testenv/build.sh")
        return 1
    with ControlPlane(binaries) as cp:
        kube = cp.admin
        trial = CRDTrial(kube, namespace)
        trial.apply_crd({"metadata": crd["metadata"], "spec": crd["spec"]}).expect_allowed()
        path = trial.path(storage["name"])
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(
                pool.map(
                    lambda o: kube.create(path, o), prometheus_objects(args.objects, namespace)
                )
            )
        print(f"stored {args.objects} objects in {time.perf_counter() - start:.1f} s (setup)")

        judged = judge.Judge(schema, KUBE_VERSION)
        list_s, listed = median_of(args.runs, lambda: sum(len(page) for page in pages(kube, path)))
        print(f"apiserver list ({PAGE}/page): {list_s:.2f} s for {listed} objects, "
              f"peak RSS {rss_mib():.0f} MiB")  # fmt: skip
        both_s, counts = median_of(
            args.runs,
            lambda: judge_all(judged, (o for page in pages(kube, path) for o in page)),
        )
        print(f"list + validate, streamed: {both_s:.2f} s, peak RSS {rss_mib():.0f} MiB")
    cpu_before = time.process_time()
    only_s, counts = median_of(
        args.runs, lambda: judge_all(judged, prometheus_objects(args.objects, namespace))
    )
    cpu_s = (time.process_time() - cpu_before) / args.runs
    per_object = only_s / counts["objects"] * 1e6
    print(f"validator only: {only_s:.2f} s for {counts['objects']} objects "
          f"({per_object:.0f} us/object), peak RSS {rss_mib():.0f} MiB")  # fmt: skip
    print(f"validator only, CPU time: {cpu_s:.2f} s per run (wall exceeds it on a busy machine)")
    print(f"validator / apiserver list: {only_s / list_s:.2f}")
    print("judged: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    verdict = "met" if only_s < TARGET_S else "MISSED"
    print(f"target: validator under {TARGET_S:.0f} s for 10,000 objects: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
