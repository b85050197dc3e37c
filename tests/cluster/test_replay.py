"""Every error's witness replayed on the real kube-apiserver (issue 33 item 2; tools/replay.py,
tools/testenv/replay.py; the contract: docs/reports.md, "witness").

First the harness itself, on hand-written witnesses for a CRD pair built here: each outcome
(confirmed, refuted, not replayed, no witness) for each operation. Then the corpus's release
pairs and the shared charts: a seeded sample of CRDs with errors, every one with
``UPGRADE_GUARD_REPLAY_ALL=1``; no witness may be refuted. The per-rule table is printed
(``-s``) and, with ``UG_REPLAY_TABLE=path``, written there.
"""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path
from typing import Any

import pytest

import replay as tool
from corpus import IN_CI, require_corpus
from testenv import Cluster, truth
from testenv.replay import CRDReplay, Outcome, detail_lines, table_text
from testenv.truth import crd_body, root_schema, version_entry
from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.report.json_report import finding_as_dict

REPLAY_ALL = os.environ.get("UPGRADE_GUARD_REPLAY_ALL") == "1"
SAMPLE = int(os.environ.get("UG_REPLAY_SAMPLE", str(tool.SAMPLE)))
SEED = int(os.environ.get("UG_REPLAY_SEED", str(tool.SEED)))
STR = {"type": "string"}
GROUP = truth.GROUP
V1 = f"{GROUP}/v1"


def widget(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "Widget", "metadata": {"name": "witness"}, "spec": spec}


def finding(code: str, path: str, witness: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "code": code,
        "severity": "error",
        "crd": f"widgets.{GROUP}",
        "version": "v1",
        "path": path,
        "proven": witness is not None,
        "witness": witness,
    }


def refuses(operation: str, stored: dict[str, Any], message: str, obj: Any = None) -> Any:
    return {
        "version": "v1",
        "operation": operation,
        "stored": widget(stored),
        "object": widget(obj) if obj is not None else None,
        "apiserver": "refuses",
        "message": message,
        "read_back": None,
    }


def reads(stored: dict[str, Any], read_back: dict[str, Any], message: str) -> Any:
    return {
        "version": "v1",
        "operation": "read",
        "stored": widget(stored),
        "object": None,
        "apiserver": "reads back changed",
        "message": message,
        "read_back": widget(read_back),
    }


MODE_B = 'spec.mode: Unsupported value: "b"'
# (finding, the outcome the replay must give it)
CASES = [
    (finding("UG202", "spec.mode", refuses("create", {"mode": "b"}, MODE_B)), "confirmed"),
    (
        finding("UG202", "spec.mode", refuses("update", {"mode": "a"}, MODE_B, {"mode": "b"})),
        "confirmed",
    ),
    (finding("UG201", "spec.legacy", reads({"legacy": "x"}, {}, "remove /spec/legacy")),
     "confirmed"),
    # A CREATE the new CRD allows, a message the apiserver does not give, a wrong read-back,
    # an object the old CRD refuses, an update the old CRD refuses too, no witness:
    (finding("UG202", "spec.mode", refuses("create", {"mode": "a"}, MODE_B)), "refuted"),
    (finding("UG202", "spec.mode", refuses("create", {"mode": "b"}, "spec.mode: Required")),
     "refuted"),
    (finding("UG201", "spec.legacy", reads({"legacy": "x"}, {"legacy": "y"}, "")), "refuted"),
    (finding("UG202", "spec.mode", refuses("create", {"mode": "c"}, "")), "refuted"),
    (
        finding("UG202", "spec.mode", refuses("update", {"mode": "a"}, "", {"mode": "c"})),
        "refuted",
    ),
    (finding("UG213", "spec.mode", None), "no witness"),
]  # fmt: skip


def widgets(mode: list[str], **extra: Any) -> dict[str, Any]:
    spec = {"mode": {**STR, "enum": mode}, **extra}
    return crd_body("widgets", [version_entry("v1", root_schema(spec))])


def replayed(cluster: Cluster, old: Any, new: Any, findings: list[Any]) -> list[Outcome]:
    group = f"r{time.monotonic_ns()}.{GROUP}"
    return CRDReplay(
        cluster.admin, "hand-written", old, new, findings, replay_group=group, namespace="replay"
    ).run()


def test_each_outcome_of_each_operation(cluster: Cluster) -> None:
    cluster.admin.ensure_namespace("replay")
    old, new = widgets(["a", "b"], legacy=STR), widgets(["a"])
    outcomes = replayed(cluster, old, new, [f for f, _ in CASES])
    got = [(o.operation, o.result) for o in outcomes]
    assert got == [(f["witness"]["operation"] if f["witness"] else "", r) for f, r in CASES], (
        "\n".join(f"{o.operation} {o.result}: {o.detail}" for o in outcomes)
    )
    details = [o.detail for o in outcomes]
    assert details[3] == "CREATE of the copy was allowed"
    assert "without 'spec.mode: Required'" in details[4] and MODE_B in details[4]
    assert details[5] == "read back differs from read_back (read_back -> GET): remove /spec/legacy"
    assert details[6].startswith("the old CRD refused the stored object")
    assert "the old CRD refused the update too" in details[7]


def test_a_new_crd_the_apiserver_refuses(cluster: Cluster) -> None:
    """A stored version dropped: the new CRD's apply is the operation (confirmed), and the
    CRD's other witnesses cannot be replayed."""
    cluster.admin.ensure_namespace("replay")
    schema = root_schema({"mode": STR})
    old = crd_body("widgets", [version_entry("v1", schema)])
    new = crd_body("widgets", [version_entry("v2", schema)])
    dropped = {
        "version": "v1",
        "operation": "apply-crd",
        "stored": widget({}),
        "object": None,
        "apiserver": "refuses",
        "message": 'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions',
        "read_back": None,
    }
    wrong = {**copy.deepcopy(dropped), "message": "spec.versions: Required"}
    findings = [
        finding("UG106", "", dropped),
        finding("UG106", "", wrong),
        finding("UG202", "spec.mode", refuses("create", {"mode": "b"}, MODE_B)),
    ]
    outcomes = replayed(cluster, old, new, findings)
    assert [o.result for o in outcomes] == ["confirmed", "refuted", "not replayed"]
    assert outcomes[2].detail.startswith("new CRD refused: ")
    # The engine's own witnesses for the pair: UG104's confirmed; UG106's rollback (v2 is
    # not in the old CRD) comes after a new CRD that is never applied.
    name = f"widgets.{GROUP}"
    said = engine.compare_crds({name: Crd(old)}, {name: Crd(new)})
    own = [finding_as_dict(f) for f in said.findings if f.code in ("UG104", "UG106")]
    outcomes = replayed(cluster, old, new, own)
    assert [(o.code, o.result) for o in outcomes] == [
        ("UG104", "confirmed"),
        ("UG106", "not replayed"),
    ], "\n".join(o.detail for o in outcomes)


def test_a_crd_absent_from_one_side(cluster: Cluster) -> None:
    """Gone from the new side (UG101): deleted, as a pruning tool deletes it; a GET is 404.
    Absent from the old side: nothing to store, not replayed."""
    cluster.admin.ensure_namespace("replay")
    gone = refuses("read", {}, "the server could not find the requested resource")
    copied = refuses("create", {"mode": "b"}, MODE_B)
    outcomes = replayed(
        cluster,
        widgets(["a", "b"]),
        None,
        [finding("UG101", "", gone), finding("UG101", "", copied)],
    )
    assert [o.result for o in outcomes] == ["confirmed", "refuted"]
    assert outcomes[1].detail.startswith("refused (404) without")
    outcomes = replayed(cluster, None, widgets(["a"]), [finding("UG202", "x", copied)])
    assert [(o.result, o.detail) for o in outcomes] == [
        ("not replayed", "the CRD is not on the old side")
    ]


def test_corpus_and_charts_replay_with_no_witness_refuted(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release pairs' errors (a seeded sample, or all with UPGRADE_GUARD_REPLAY_ALL=1):
    no witness refuted, nothing left unreplayed but for a reason printed."""
    require_corpus()
    if not tool.CHARTS.is_dir():
        message = f"the shared charts are not at {tool.CHARTS} (UPGRADE_GUARD_SHARED)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    start = time.monotonic()
    sources = tool.corpus_sources() + tool.chart_sources(cluster.binaries.helm, tmp_path)
    chosen = list(tool.all_jobs(sources)) if REPLAY_ALL else tool.sampled(sources, SAMPLE, SEED)
    outcomes = tool.replay(cluster.admin, chosen)
    text = tool.report(outcomes, time.monotonic() - start, len(sources), len(chosen))
    with capsys.disabled():
        print(f"\n{text}")
    target = os.environ.get("UG_REPLAY_TABLE")
    if target:
        Path(target).write_text(table_text(outcomes) + "\n")
    assert chosen and outcomes
    assert not detail_lines(outcomes, "refuted"), text


def test_a_read_at_a_version_no_longer_served(cluster: Cluster) -> None:
    """UG105's witness: a GET at the removed version is 404 (in either wording: this CRD is
    alone in its group, so the apiserver answers discovery's plain "404 page not found");
    a GET at a version still served is not refused."""
    cluster.admin.ensure_namespace("replay")
    schema = root_schema({"mode": STR})
    old = crd_body("widgets", [version_entry("v1alpha1", schema, storage=False),
                               version_entry("v1", schema)])  # fmt: skip
    new = crd_body("widgets", [version_entry("v1", schema)])
    gone = {
        "version": "v1alpha1",
        "operation": "read",
        "stored": {**widget({}), "apiVersion": f"{GROUP}/v1alpha1"},
        "object": None,
        "apiserver": "refuses",
        "message": "the server could not find the requested resource",
        "read_back": None,
    }
    served = {**gone, "version": "v1", "stored": widget({})}
    outcomes = replayed(
        cluster, old, new, [finding("UG105", "", gone), finding("UG105", "", served)]
    )
    assert [(o.result, o.detail) for o in outcomes] == [
        ("confirmed", ""),
        ("refuted", "GET at the version succeeded"),
    ]


def test_a_stored_status_is_written_through_the_status_subresource(cluster: Cluster) -> None:
    """A CREATE drops ``status`` where the version has the status subresource: the replay
    writes it through /status, so a status field the new CRD prunes is read back changed,
    while a CREATE of a copy, which drops it again, is never refused for it."""
    cluster.admin.ensure_namespace("replay")
    old = crd_body("widgets", [version_entry("v1", root_schema(status={"legacy": STR}))])
    new = crd_body("widgets", [version_entry("v1", root_schema())])
    stored = {**widget({}), "status": {"legacy": "x"}}
    pruned = {
        "version": "v1",
        "operation": "read",
        "stored": stored,
        "object": None,
        "apiserver": "reads back changed",
        "message": "remove /status/legacy",
        "read_back": {**widget({}), "status": {}},
    }
    copied = {**pruned, "operation": "create", "apiserver": "refuses", "read_back": None}
    findings = [finding("UG201", "status.legacy", w) for w in (pruned, copied)]
    outcomes = replayed(cluster, old, new, findings)
    assert [(o.result, o.detail) for o in outcomes] == [
        ("confirmed", ""),
        ("refuted", "CREATE of the copy was allowed"),
    ]


def status_write(apiserver: str, status: dict[str, Any], message: str, read: Any = None) -> Any:
    return {
        "version": "v1",
        "operation": "status",
        "stored": widget({}),
        "object": {**widget({}), "status": status},
        "apiserver": apiserver,
        "message": message,
        "read_back": None if read is None else {**widget({}), "status": read},
    }


def test_a_status_write_refused_or_read_back_changed(cluster: Cluster) -> None:
    """``status``: the stored object (a CREATE dropped its status) has ``object``'s status
    written through /status: refused once the new CRD is applied, or, made while the old
    CRD was live, read back changed after it. Beside each, the nearest that is refuted:
    a write the new CRD allows, a write the old CRD refuses, a wrong read-back."""
    cluster.admin.ensure_namespace("replay")
    modes = {"mode": {**STR, "enum": ["a", "b"]}, "legacy": STR}
    old = crd_body("widgets", [version_entry("v1", root_schema(status=modes))])
    new = crd_body(
        "widgets", [version_entry("v1", root_schema(status={"mode": {**STR, "enum": ["a"]}}))]
    )
    status_b = 'status.mode: Unsupported value: "b"'
    cases = [
        (status_write("refuses", {"mode": "b"}, status_b), "confirmed"),
        (status_write("reads back changed", {"legacy": "x"}, "remove /status/legacy", {}),
         "confirmed"),
        (status_write("refuses", {"mode": "a"}, status_b), "refuted"),
        (status_write("refuses", {"mode": "c"}, ""), "refuted"),
        (status_write("reads back changed", {"legacy": "x"}, "", {"legacy": "x"}), "refuted"),
    ]  # fmt: skip
    outcomes = replayed(cluster, old, new, [finding("UG207", "status.mode", w) for w, _ in cases])
    assert [(o.operation, o.result) for o in outcomes] == [("status", r) for _, r in cases], (
        "\n".join(f"{o.operation} {o.result}: {o.detail}" for o in outcomes)
    )
    details = [o.detail for o in outcomes]
    assert details[2] == "the /status write was allowed"
    assert details[3].startswith("the old CRD refused the status write")
    assert details[4].startswith("read back differs from read_back")


def test_a_create_read_back_changed(cluster: Cluster) -> None:
    """A default changed: the old CRD wrote it into ``stored``; the same body created after
    the new CRD is stored with the new one. Beside it, refuted: a body the old CRD stores
    otherwise than ``stored``, a read-back the new CRD does not give."""
    cluster.admin.ensure_namespace("replay")
    old = crd_body("widgets", [version_entry("v1", root_schema({"mode": {**STR, "default": "a"}}))])
    new = crd_body("widgets", [version_entry("v1", root_schema({"mode": {**STR, "default": "b"}}))])

    def created(stored: str, read: str) -> Any:
        return {
            "version": "v1",
            "operation": "create",
            "stored": widget({"mode": stored}),
            "object": widget({}),
            "apiserver": "reads back changed",
            "message": "replace /spec/mode",
            "read_back": widget({"mode": read}),
        }

    cases = [(created("a", "b"), "confirmed"), (created("b", "b"), "refuted"),
             (created("a", "a"), "refuted")]  # fmt: skip
    outcomes = replayed(cluster, old, new, [finding("UG219", "spec.mode", w) for w, _ in cases])
    assert [(o.operation, o.result) for o in outcomes] == [("create", r) for _, r in cases], (
        "\n".join(f"{o.operation} {o.result}: {o.detail}" for o in outcomes)
    )
    assert outcomes[1].detail == "the old CRD stores the object otherwise than stored"
    assert outcomes[2].detail.startswith("read back differs from read_back")


def test_a_copy_at_the_version_read(cluster: Cluster) -> None:
    """UG110: stored at v1 while the old CRD is live; the new CRD serves v2 with another
    schema and conversion None: a copy made at ``read_version`` v2 is refused, one made at
    v1 (no read_version) is allowed."""
    cluster.admin.ensure_namespace("replay")
    v1 = version_entry("v1", root_schema({"x": STR}), storage=False)
    old = crd_body("widgets", [v1, version_entry("v2", root_schema({"x": STR}))])
    new = crd_body("widgets", [v1, version_entry("v2", root_schema({"x": {"type": "integer"}}))])
    copied = {**refuses("create", {"x": "a"}, "spec.x: Invalid value"), "read_version": "v2"}
    same = {**copied, "read_version": None}
    outcomes = replayed(cluster, old, new, [finding("UG110", "spec.x", w) for w in (copied, same)])
    assert [(o.result, o.detail) for o in outcomes] == [
        ("confirmed", ""),
        ("refuted", "CREATE of the copy was allowed"),
    ]


def test_a_rollback_refused_once_the_storage_version_moved(cluster: Cluster) -> None:
    """UG106's witness, as the engine builds it: stored at v1alpha1, the new CRD stores v1,
    the old CRD (v1alpha1 only) applied again is refused, status.storedVersions listing v1.
    Beside it, refuted: a message the apiserver does not give, and the same rollback where
    the old CRD lists v1 unserved (accepted: the rule's info)."""
    cluster.admin.ensure_namespace("replay")
    schema = root_schema({"mode": STR})
    old = crd_body("widgets", [version_entry("v1alpha1", schema)])
    listed = crd_body(
        "widgets",
        [
            version_entry("v1alpha1", schema),
            version_entry("v1", schema, storage=False, served=False),
        ],
    )
    new = crd_body("widgets", [version_entry("v1alpha1", schema, storage=False),
                               version_entry("v1", schema)])  # fmt: skip
    name = f"widgets.{GROUP}"
    outcome = engine.compare_crds({name: Crd(old)}, {name: Crd(new)})
    moved = next(finding_as_dict(f) for f in outcome.findings if f.code == "UG106")
    assert moved["witness"]["operation"] == "apply-old-crd", moved
    wrong = {**moved, "witness": {**moved["witness"], "message": 'Invalid value: "v2"'}}
    outcomes = replayed(cluster, old, new, [moved, wrong])
    assert [(o.operation, o.result) for o in outcomes] == [
        ("apply-old-crd", "confirmed"),
        ("apply-old-crd", "refuted"),
    ], "\n".join(o.detail for o in outcomes)
    assert "missing from spec.versions" in outcomes[1].detail
    outcomes = replayed(cluster, listed, new, [moved])
    assert [(o.result, o.detail) for o in outcomes] == [
        ("refuted", "the old CRD was applied again")
    ]


def test_written_after_the_upgrade_at_one_version_operated_on_at_another(cluster: Cluster) -> None:
    """UG110 where only objects written after the upgrade meet the disagreement: the old CRD
    serves v1 alone; the new one adds a field ``y`` to v1 and serves v2 without it, with a
    bound on ``x`` and a default v1 lacks (conversion None). Written at v1 once the new CRD
    is applied (``stored_under`` new): a GET at v2 prunes ``y`` by v2's schema, but fills
    no default of v2 (on read, the apiserver defaults by the storage version's schema); a
    copy, or an UPDATE, at v2 is refused for ``x``; the same at v1 is allowed or reads back
    unchanged (refuted)."""
    cluster.admin.ensure_namespace("replay")
    old = crd_body("widgets", [version_entry("v1", root_schema({"x": STR}))])
    v2 = root_schema({"x": {**STR, "maxLength": 1}, "z": {**STR, "default": "d"}})
    new = crd_body(
        "widgets",
        [
            version_entry("v1", root_schema({"x": STR, "y": STR})),
            version_entry("v2", v2, storage=False),
        ],
    )
    after = {"stored_under": "new", "read_version": "v2"}
    read_back = {**widget({"x": "a"}), "apiVersion": f"{GROUP}/v2"}
    read = {**reads({"x": "a", "y": "b"}, {}, "remove /spec/y"), **after}
    read["read_back"] = read_back
    too_long = "spec.x: Too long"
    copied = {**refuses("create", {"x": "ab"}, too_long), **after}
    updated = {**refuses("update", {"x": "a"}, too_long, {"x": "ab"}), **after}
    cases = [
        (read, "confirmed"),
        (copied, "confirmed"),
        (updated, "confirmed"),
        ({**read, "read_version": None}, "refuted"),
        ({**copied, "read_version": None}, "refuted"),
        ({**updated, "read_version": None}, "refuted"),
    ]
    outcomes = replayed(cluster, old, new, [finding("UG110", "spec", w) for w, _ in cases])
    assert [(o.operation, o.result) for o in outcomes] == [(w["operation"], r) for w, r in cases], (
        "\n".join(f"{o.operation} {o.result}: {o.detail}" for o in outcomes)
    )
    assert outcomes[3].detail.startswith("read back differs from read_back")
    assert outcomes[4].detail == "CREATE of the copy was allowed"
    assert outcomes[5].detail == "UPDATE to the object was allowed"


def applied_witness(field: str, applies: list[dict[str, str]], again: dict[str, str]) -> Any:
    """An ``apply`` witness at ``spec.<field>``: the maps applied by witness-a (then
    witness-b), then witness-a's ``again``: granular -> atomic, a conflict with witness-b;
    atomic -> granular (one apply), the key left out read back."""
    stored = widget({field: {k: v for m in applies for k, v in m.items()}})
    refused = len(applies) > 1
    return {
        "version": "v1",
        "operation": "apply",
        "stored": stored,
        "object": widget({field: again}),
        "apiserver": "refuses" if refused else "reads back changed",
        "message": f'conflict with "witness-b": .spec.{field}'
        if refused
        else f"add /spec/{field}/b",
        "read_back": None if refused else stored,
        "applied": [
            {"manager": manager, "object": widget({field: m})}
            for manager, m in zip(("witness-a", "witness-b"), applies, strict=False)
        ],
    }


def test_a_server_side_apply_after_a_map_type_change(cluster: Cluster) -> None:
    """UG215: ``m`` from granular to atomic, witness-b's key makes witness-a's unchanged
    apply a conflict; ``s`` from atomic to granular, the key witness-a leaves out is kept;
    ``r``, a map whose one key is required, made atomic: witness-b applied it empty, and
    witness-a's change of the key conflicts. Beside each, refuted, the same witness on a map
    whose type stays: the apply is allowed (``g``, ``q``), the key is dropped (``t``)."""
    cluster.admin.ensure_namespace("replay")
    granular = {"type": "object", "additionalProperties": STR}
    atomic = {**granular, "x-kubernetes-map-type": "atomic"}
    held = {"type": "object", "properties": {"a": STR}, "required": ["a"]}
    held_atomic = {**held, "x-kubernetes-map-type": "atomic"}
    maps = {"m": granular, "s": atomic, "g": granular, "t": atomic, "r": held, "q": held}
    old = crd_body("widgets", [version_entry("v1", root_schema(maps))])
    changed_maps = {**maps, "m": atomic, "s": granular, "r": held_atomic}
    new = crd_body("widgets", [version_entry("v1", root_schema(changed_maps))])
    a, ab = {"a": "a"}, {"a": "a", "b": "a"}
    applies = {"m": [a, ab], "g": [a, ab], "s": [ab], "t": [ab]}
    findings = [finding("UG215", f"spec.{f}", applied_witness(f, m, a)) for f, m in applies.items()]
    # every key required: witness-b applies the map less the key, witness-a then changes it
    for field in ("r", "q"):
        changed = applied_witness(field, [a, {}], {"a": "b"})
        changed["stored"] = widget({field: a})
        findings.append(finding("UG215", f"spec.{field}", changed))
    outcomes = replayed(cluster, old, new, findings)
    assert [(o.operation, o.result) for o in outcomes] == [
        ("apply", "confirmed"),
        ("apply", "refuted"),
        ("apply", "confirmed"),
        ("apply", "refuted"),
        ("apply", "confirmed"),
        ("apply", "refuted"),
    ], "\n".join(f"{o.operation} {o.result}: {o.detail}" for o in outcomes)
    assert outcomes[1].detail == "the apply was allowed"
    assert outcomes[5].detail == "the apply was allowed"
    assert (
        outcomes[3].detail
        == "read back differs from read_back (read_back -> GET): remove /spec/t/b"
    )


def test_a_server_side_apply_through_the_status_subresource(cluster: Cluster) -> None:
    """UG215 under status, with the status subresource: the object is created, the applies
    are made through /status, and the conflict names the subresource; beside it, refuted,
    the same witness where the map under status stays granular."""
    cluster.admin.ensure_namespace("replay")
    granular = {"type": "object", "additionalProperties": STR}
    atomic = {**granular, "x-kubernetes-map-type": "atomic"}
    old = crd_body(
        "widgets", [version_entry("v1", root_schema(status={"m": granular, "g": granular}))]
    )
    new = crd_body(
        "widgets", [version_entry("v1", root_schema(status={"m": atomic, "g": granular}))]
    )

    def with_status(field: str, m: dict[str, str]) -> dict[str, Any]:
        return {**widget({}), "status": {field: m}}

    def conflict(field: str) -> dict[str, Any]:
        a, ab = {"a": "a"}, {"a": "a", "b": "a"}
        return {
            "version": "v1",
            "operation": "apply",
            "stored": with_status(field, ab),
            "object": with_status(field, a),
            "apiserver": "refuses",
            "message": f'conflict with "witness-b" with subresource "status": .status.{field}',
            "read_back": None,
            "applied": [
                {"manager": "witness-a", "object": with_status(field, a)},
                {"manager": "witness-b", "object": with_status(field, ab)},
            ],
        }

    findings = [finding("UG215", f"status.{f}", conflict(f)) for f in ("m", "g")]
    outcomes = replayed(cluster, old, new, findings)
    assert [(o.result, o.detail) for o in outcomes] == [
        ("confirmed", ""),
        ("refuted", "the apply was allowed"),
    ]
