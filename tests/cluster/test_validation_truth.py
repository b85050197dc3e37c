"""The validator held to the real kube-apiserver on generated CRD evolutions.

Hypothesis (seeded, a bounded number of cases, each a CRD pair with a batch of objects)
draws ``spec`` schemas, edits that break stored objects (including CEL rules from
../shared/corpus) and objects. For each case: apply the old CRD, CREATE every object (the
apiserver decides which are stored; the validator must agree), apply the new CRD, then per
stored object GET it (pruning, defaulting), CREATE a copy (dry run), write it to
``/status`` as read (the write the hook's evidence judges), UPDATE it touching only a
label, and UPDATE it with the edited field changed. The validator
(:mod:`upgrade_guard.apiserver.judge`) must predict every answer: accepted or refused, and
the object a GET returns.

``UG_DIFFERENTIAL_CASES`` (default 300) and ``UG_DIFFERENTIAL_SECONDS`` (default 300: no
new case starts after that) bound the run; ``UG_DIFFERENTIAL_SEED`` picks the cases;
on the oldest minor's apiserver (issue 38), the validator judging for that minor, the rows
run with the first ``UG_DIFFERENTIAL_CASES_OLDEST`` (default 60) of the same cases;
``UG_DIFFERENTIAL_REPORT=path`` writes the counts and every disagreement as JSON (``path.1.32``
for the oldest minor).
Disagreements found are kept as rows in ``tests/validation_rows.py``: replayed here, and on
the validator alone by ``tests/validation/test_regressions.py``.
"""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from test_crd_validation_truth import ModelDisagrees

from corpus import CORPUS, require_corpus, tags
from schema_strategies import Case, cases, corpus_rules
from testenv import NEWEST_MINOR, OLDEST_MINOR, Cluster, CRDTrial, Kube, KubeError
from testenv.truth import MARKER, crd_body, version_entry, with_marker
from upgrade_guard.apiserver import judge
from upgrade_guard.crd import Crd
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import load_documents
from validation_rows import REGRESSIONS, root_schema

CASES = int(os.environ.get("UG_DIFFERENTIAL_CASES", "300"))
CASES_OLDEST = int(os.environ.get("UG_DIFFERENTIAL_CASES_OLDEST", "60"))
SECONDS = float(os.environ.get("UG_DIFFERENTIAL_SECONDS", "300"))
SEED = int(os.environ.get("UG_DIFFERENTIAL_SEED", "20261130"))
CORPUS_PROJECTS = ("istio", "prometheus-operator", "cert-manager", "kyverno")


def load_corpus_rules() -> list[Any]:
    require_corpus()
    found = []
    for project in CORPUS_PROJECTS:
        latest = tags(project)[-1]
        crds: dict[str, Crd] = crds_from(load_documents(str(CORPUS / project / latest)))
        found += corpus_rules({name: dict(crd.raw) for name, crd in crds.items()}, project)
    return found


def generate(corpus: list[Any]) -> list[Case]:
    collected: list[Case] = []

    @seed(SEED)
    @settings(
        max_examples=CASES,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases(corpus))
    def collect(case: Case) -> None:
        collected.append(case)

    collect()
    unique = {json.dumps([c.old, c.new, c.objects], sort_keys=True): c for c in collected}
    return list(unique.values())[:CASES]


# Running one case -------------------------------------------------------------------------
@dataclass
class Tally:
    checked: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)  # by the apiserver, of checked
    not_evaluated: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def compare(
        self,
        case: Case,
        op: str,
        predicted: judge.Attempt,
        allowed: bool,
        message: str,
        obj: Any,
    ) -> None:
        with self.lock:
            if predicted.not_evaluated and not predicted.refused:
                self.not_evaluated[op] += 1
                return
            self.checked[op] += 1
            self.refused[op] += not allowed
            if predicted.refused == (not allowed):
                return
            self.disagreements.append(
                {
                    "op": op,
                    "apiserver": "ok" if allowed else f"refused: {message}",
                    "validator": [f"{v.path} {v.check}: {v.detail}" for v in predicted.violations]
                    or "ok",
                    "old": case.old,
                    "new": case.new,
                    "edits": case.edits,
                    "object": obj,
                }
            )

    def compare_read(self, case: Case, predicted: Any, got: Any, stored: Any) -> None:
        with self.lock:
            self.checked["GET"] += 1
            changed = {**_content(got), MARKER: None} != {**_content(stored), MARKER: None}
            self.refused["GET"] += changed
            if _content(predicted) == _content(got):
                return
            self.disagreements.append(
                {
                    "op": "GET",
                    "apiserver": _content(got),
                    "validator": _content(predicted),
                    "stored": stored,
                    "old": case.old,
                    "new": case.new,
                    "edits": case.edits,
                }
            )


def _reason(message: str) -> str:
    """A CRD refusal without the object name: the start of its field errors."""
    text = message.partition(" is invalid: ")[2]
    return re.sub(r"(spec\.validation\.openAPIV3Schema|\.?properties\[\w+\]|\.items)", "", text)[
        :100
    ]


def _content(obj: Any) -> Any:
    return {k: v for k, v in obj.items() if k != "metadata"}


def _write(call: Callable[[], Any]) -> tuple[bool, str, Any]:
    try:
        return True, "", call()
    except KubeError as err:
        if err.code >= 500 or err.code in (404, 409):
            raise
        return False, err.message, None


def _changed_field(case: Case, i: int, current: dict[str, Any]) -> dict[str, Any] | None:
    """``current`` with the value under the first edited property path replaced by the
    alternate object's (or removed): an UPDATE of the changed field."""
    for _, path in case.edits:
        steps: list[str] = []
        for step in path:
            if step in ("[]", "*"):
                break
            steps.append(step)
        if not steps:
            continue
        body = copy.deepcopy(current)
        target = body.setdefault("spec", {})
        source: Any = case.alternates[i]
        for step in steps[:-1]:
            if not isinstance(target.get(step), dict):
                target[step] = {}
            target = target[step]
            source = source.get(step) if isinstance(source, dict) else None
        last = steps[-1]
        if isinstance(source, dict) and last in source:
            target[last] = copy.deepcopy(source[last])
        else:
            target.pop(last, None)
        if body != current:
            return body
    return None


def run_case(
    kube: Kube,
    case: Case,
    index: int,
    namespace: str,
    tally: Tally,
    kube_version: tuple[int, int],
) -> str:
    """Run one case; return "ran", or why its CRDs left nothing to compare."""
    plural = f"vt{index}x{secrets.token_hex(3)}s"
    old_crd = crd_body(plural, [version_entry("v1", root_schema(case.old))])
    new_crd = with_marker(crd_body(plural, [version_entry("v1", root_schema(case.new))]), "new")
    trial = CRDTrial(kube, namespace)
    applied = trial.apply_crd(old_crd)
    if not applied.allowed:
        with tally.lock:
            tally.skipped["old CRD refused: " + _reason(applied.message)] += 1
        return "old CRD refused"
    api_version = f"{old_crd['spec']['group']}/v1"
    kind = old_crd["spec"]["names"]["kind"]
    old_judge = judge.Judge(
        old_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], kube_version
    )
    stored: dict[str, dict[str, Any]] = {}
    for i, spec in enumerate(case.objects):
        body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": f"o{i}"}}
        if spec is not None:
            body["spec"] = spec
        attempt = trial.create(body)
        tally.compare(
            case, "CREATE under old", old_judge.create(body), attempt.allowed, attempt.message, body
        )
        if attempt.allowed and attempt.object is not None:
            stored[f"o{i}"] = attempt.object
    try:
        if not stored:
            return "ran"
        updated = trial.apply_crd(new_crd)
        if not updated.allowed:
            with tally.lock:
                tally.skipped["new CRD refused: " + _reason(updated.message)] += 1
            return "new CRD refused"
        schema = new_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        new_judge = judge.Judge(schema, kube_version)
        for name, before in stored.items():
            i = int(name[1:])
            got = trial.wait_read(name, lambda o: o.get(MARKER) == "new", timeout=20)
            tally.compare_read(case, new_judge.read(before), got, before)
            _observe_writes(trial, case, i, name, new_judge, tally)
    finally:
        trial.delete_crd()
    return "ran"


def _observe_writes(
    trial: CRDTrial, case: Case, i: int, name: str, new_judge: judge.Judge, tally: Tally
) -> None:
    kube = trial.kube
    got = trial.get(name)
    copy_body = judge.fresh_copy(got)
    copy_body["metadata"]["name"] = f"{name}-copy"
    ok, message, _ = _write(lambda: kube.create(trial.path(), copy_body, dryRun="All"))
    tally.compare(case, "CREATE copy", new_judge.create(copy_body), ok, message, got)

    got = trial.get(name)
    ok, message, _ = _write(lambda: kube.replace(trial.path(None, name) + "/status", got))
    tally.compare(case, "UPDATE /status", new_judge.judge(got).status, ok, message, got)

    got = trial.get(name)
    touched = copy.deepcopy(got)
    touched["metadata"].setdefault("labels", {})[judge.TOUCH_LABEL] = "true"
    ok, message, _ = _write(lambda: kube.replace(trial.path(None, name), touched))
    tally.compare(case, "UPDATE label", new_judge.update(touched, got), ok, message, got)

    got = trial.get(name)
    changed = _changed_field(case, i, got)
    if changed is not None:
        ok, message, _ = _write(lambda: kube.replace(trial.path(None, name), changed))
        tally.compare(
            case, "UPDATE changed field", new_judge.update(changed, got), ok, message, changed
        )


# The test ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "minor",
    # 1.32 does not ratchet a /status write (kubernetes#129506, 1.33): an object whose
    # unchanged spec fails a new CEL rule cannot have its status written there.
    [NEWEST_MINOR, OLDEST_MINOR],
)
def test_validator_agrees_with_apiserver(cluster_at: Callable[[str], Cluster], minor: str) -> None:
    cluster = cluster_at(minor)
    kube_version = (1, int(minor.split(".")[1]))
    corpus = load_corpus_rules()
    generated = generate(corpus)[: CASES if minor == NEWEST_MINOR else CASES_OLDEST]
    replayed = [row.case() for row in REGRESSIONS]
    namespace = f"validation-truth-{secrets.token_hex(3)}"
    cluster.admin.ensure_namespace(namespace)
    tally = Tally()
    deadline = time.monotonic() + SECONDS
    ran = Counter[str]()

    def one(index: int, case: Case, source: str) -> None:
        if source == "generated" and time.monotonic() > deadline:
            with tally.lock:
                tally.skipped["time bound reached"] += 1
            return
        if run_case(cluster.admin, case, index, namespace, tally, kube_version) == "ran":
            with tally.lock:
                ran[source] += 1

    work = [(i, c, "regression") for i, c in enumerate(replayed)]
    work += [(len(replayed) + i, c, "generated") for i, c in enumerate(generated)]
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="differential") as pool:
        for future in [pool.submit(one, *item) for item in work]:
            future.result()
    summary = {
        "minor": minor,
        "seed": SEED,
        "cases run": dict(ran),
        "corpus rules": len(corpus),
        "checked": dict(tally.checked),
        "checked total": sum(tally.checked.values()),
        "refused (GET: changed)": dict(tally.refused),
        "not evaluated": dict(tally.not_evaluated),
        "skipped": dict(tally.skipped),
        "disagreements": len(tally.disagreements),
    }
    print(json.dumps(summary))
    target = os.environ.get("UG_DIFFERENTIAL_REPORT")
    if target:
        if minor != NEWEST_MINOR:
            target += f".{minor}"
        Path(target).write_text(json.dumps({**summary, "found": tally.disagreements}, indent=1))
    assert ran["regression"] == len(replayed)
    assert sum(tally.checked.values()) > 0
    if tally.disagreements:
        raise ModelDisagrees(json.dumps(tally.disagreements[:3], indent=1))
