"""Replay every error's witness on the real kube-apiserver (issue 33 item 2).

    .venv/bin/python tools/replay.py [--all] [--sample N] [--seed S] [--project P ...]
                                     [--rule CODE ...] [--workers W] [--jsonl FILE]

The sources are the consecutive release pairs of ../shared/corpus (83 of them, six
projects) and the shared charts (external-secrets 0.15.0 -> 0.16.0, cert-manager v1.18.0 ->
v1.19.0, each rendered by the real helm with its CRDs). For each source,
``upgrade-guard diff OLD NEW --kube-version 1.35 --output json`` gives the errors; every CRD
with errors is replayed in one apply sequence on a kube-apiserver v1.35.4 + etcd started here
(tools/testenv; ``testenv/replay.py`` says what the sequence is and what it changes in the
CRDs). Prints, per rule: errors, witnesses confirmed, refuted, not replayed, errors without a
witness; then every refuted and not-replayed finding. Exit 1 when a witness is refuted.

Without ``--all`` it replays a seeded sample (``--sample`` CRDs with errors, at most two per
source, drawn with ``--seed``), the one CI runs in tests/cluster/test_replay.py. With
``--all``, ``--rule`` keeps only the errors of the rules named.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "hook"))

from corpus import CORPUS, pairs  # noqa: E402
from testenv import ControlPlane, Kube, find_binaries  # noqa: E402
from testenv.kube import JSON  # noqa: E402
from testenv.replay import (  # noqa: E402
    CRDReplay,
    Outcome,
    detail_lines,
    errors_of,
    findings_by_crd,
    table_text,
)
from upgrade_guard.load.documents import load_documents  # noqa: E402

CHARTS = Path(os.environ.get("UPGRADE_GUARD_SHARED", REPO.parent / "shared")) / "charts"
# Chart, versions, and the values that make it render its CRDs.
CHART_PAIRS = (
    ("external-secrets", "0.15.0", "0.16.0", ()),
    ("cert-manager", "v1.18.0", "v1.19.0", ("--set", "crds.enabled=true")),
)
SAMPLE = 8
SEED = 20261206
PER_SOURCE = 2
WORKERS = 4
NAMESPACE = "replay"
UPGRADE_GUARD = Path(sys.executable).parent / "upgrade-guard"


@dataclass(frozen=True)
class Source:
    """One release pair: the two sides as directories or rendered files."""

    label: str
    old: Path
    new: Path


def corpus_sources(projects: Sequence[str] = ()) -> list[Source]:
    return [
        Source(f"{project} {a} -> {b}", CORPUS / project / a, CORPUS / project / b)
        for project, a, b in pairs()
        if not projects or project in projects
    ]


def chart_sources(helm: Path, scratch: Path, projects: Sequence[str] = ()) -> list[Source]:
    """The shared charts rendered by helm (copies, as the cluster tests render them)."""
    found = []
    for chart, old, new, values in CHART_PAIRS:
        if projects and chart not in projects:
            continue
        rendered = []
        for version in (old, new):
            copy = scratch / f"{chart}-{version}"
            shutil.copytree(CHARTS / chart / version, copy)
            out = subprocess.run(
                [str(helm), "template", "rel", str(copy), "--namespace", "ops", *values],
                capture_output=True, text=True, check=True, timeout=120,
            ).stdout  # fmt: skip
            path = scratch / f"{chart}-{version}.yaml"
            path.write_text(out)
            rendered.append(path)
        found.append(Source(f"{chart} chart {old} -> {new}", rendered[0], rendered[1]))
    return found


def diff_errors(source: Source) -> list[JSON]:
    """The diff's error findings for the pair (exit 0 or 1; anything else is a failure)."""
    done = subprocess.run(
        [str(UPGRADE_GUARD), "diff", str(source.old), str(source.new),
         "--kube-version", "1.35", "--output", "json"],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{source.label}: diff exit {done.returncode}: {done.stderr[-2000:]}")
    return errors_of(json.loads(done.stdout))


def crd_of(side: Path, name: str) -> JSON | None:
    """The CRD named ``name`` on one side: the corpus keeps one file per CRD, named after it."""
    own = side / f"{name}.yaml"
    for document in load_documents(str(own if own.is_file() else side)):
        body = document.body
        if (
            isinstance(body, dict)
            and body.get("kind") == "CustomResourceDefinition"
            and body.get("metadata", {}).get("name") == name
        ):
            return body
    return None


@dataclass(frozen=True)
class Job:
    source: Source
    crd: str
    findings: list[JSON]


def jobs_of(source: Source, errors: Sequence[JSON]) -> list[Job]:
    return [Job(source, crd, found) for crd, found in findings_by_crd(errors).items()]


def sampled(sources: Sequence[Source], size: int, seed: int) -> list[Job]:
    """``size`` CRDs with errors drawn with ``seed``: sources in a seeded order, at most
    PER_SOURCE CRDs from each, witnessed ones first (a CRD whose errors have no witness
    replays nothing); only the sources drawn are diffed."""
    rng = random.Random(seed)
    order = list(sources)
    rng.shuffle(order)
    taken: list[Job] = []
    for source in order:
        if len(taken) >= size:
            break
        jobs = jobs_of(source, diff_errors(source))
        rng.shuffle(jobs)
        jobs.sort(key=lambda j: not any(f.get("witness") for f in j.findings))
        taken.extend(jobs[: min(PER_SOURCE, size - len(taken))])
    return taken


def replay_job(kube: Kube, job: Job, serial: int) -> list[Outcome]:
    group = job.crd.split(".", 1)[1]
    return CRDReplay(
        kube,
        job.source.label,
        crd_of(job.source.old, job.crd),
        crd_of(job.source.new, job.crd),
        job.findings,
        replay_group=f"r{serial}.{group}",
        namespace=NAMESPACE,
    ).run()


def replay(
    kube: Kube,
    jobs: Sequence[Job],
    workers: int = WORKERS,
    on_done: Callable[[list[Outcome]], None] | None = None,
) -> list[Outcome]:
    """Every job's outcomes, ``workers`` CRD sequences at a time, in the jobs' order."""
    kube.ensure_namespace(NAMESPACE)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures: list[Future[list[Outcome]]] = [
            pool.submit(replay_job, kube, job, serial) for serial, job in enumerate(jobs)
        ]
        outcomes: list[Outcome] = []
        for future in futures:
            done = future.result()
            if on_done:
                on_done(done)
            outcomes.extend(done)
    return outcomes


def all_jobs(sources: Sequence[Source], rules: Sequence[str] = ()) -> Iterator[Job]:
    for source in sources:
        errors = diff_errors(source)
        yield from jobs_of(source, [f for f in errors if not rules or f.get("code") in rules])


def report(outcomes: Sequence[Outcome], seconds: float, sources: int, crds: int) -> str:
    lines = [
        f"replay: {sources} release pairs, {crds} CRDs with errors, {seconds:.0f} s",
        "",
        table_text(outcomes),
    ]
    for result in ("refuted", "not replayed"):
        found = detail_lines(outcomes, result)
        if found:
            lines += ["", f"{result} ({len(found)}): pair | CRD | version | path | code | what"]
            lines += found
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every CRD with errors")
    parser.add_argument("--sample", type=int, default=SAMPLE)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--project", action="append", default=[])
    parser.add_argument("--rule", action="append", default=[], help="only this rule's errors")
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--jsonl", type=Path, help="append each outcome as a JSON line")
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries.missing():
        print(f"missing {', '.join(binaries.missing())}: run tools/kube-testenv/build.sh")
        return 2
    if not CORPUS.is_dir() or not CHARTS.is_dir():
        print(f"corpus or charts not found at {CORPUS}, {CHARTS} (UG_CORPUS, UPGRADE_GUARD_SHARED)")
        return 2
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="replay-") as scratch:
        sources = corpus_sources(args.project) + chart_sources(
            binaries.helm, Path(scratch), args.project
        )
        try:
            chosen = (
                list(all_jobs(sources, args.rule))
                if args.all
                else sampled(sources, args.sample, args.seed)
            )
        except RuntimeError as err:
            print(f"replay: {err}", file=sys.stderr)
            return 2
        print(f"diff: {len(chosen)} CRDs with errors to replay "
              f"({time.monotonic() - start:.0f} s)", flush=True)  # fmt: skip

        def write(done: list[Outcome]) -> None:
            if args.jsonl:
                with args.jsonl.open("a") as out:
                    out.writelines(json.dumps(o.__dict__) + "\n" for o in done)

        with ControlPlane(binaries) as plane:
            outcomes = replay(plane.admin, chosen, args.workers, write)
    print(report(outcomes, time.monotonic() - start, len(sources), len(chosen)))
    return 1 if any(o.result == "refuted" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
