"""The hook's own checks, pure: chart/image pairing, schema version against the live CRDs,
and state newer than the release reads. Each refusal beside the nearest case that passes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from crd_builders import NAME, crd, spec_schema, version
from upgrade_guard.counters import history
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding
from upgrade_guard.images import image_keys
from upgrade_guard.judging import Changes, judge
from upgrade_guard.load.image_table import parse_image_table
from upgrade_guard.pipelines import hook_run
from upgrade_guard.policy import DEFAULT_POLICY, Policy, PolicyError, parse_policy
from upgrade_guard.report import hook_log
from upgrade_guard.report.ways_out import UNASKED
from upgrade_guard.subjects import HookSubject, WrittenState

TABLE = parse_image_table(
    {
        "images": {
            "1.0.0": {"controller-state-version": 2},
            "2.0.0": {"controller-state-version": 3},
            "2.0.1": {"controller-state-version": 3},
            "sha256:" + "a" * 64: {"controller-state-version": 3},
        }
    },
    "images.yaml",
)


def judged(changes: Changes, policy: Policy = DEFAULT_POLICY) -> list[Finding]:
    return list(judge(changes, policy).findings)


def paired(
    counters: dict[str, int], images: dict[str, str], table: Any, policy: Policy = DEFAULT_POLICY
) -> list[Finding]:
    """What the hook's checks find before the cluster is read: the pairing (``counters`` as
    the hook's --counter gives them)."""
    given = {policy.annotation(name): str(value) for name, value in counters.items()}
    subject = hook_run.subject_for(policy, {}, given, images, table)
    return judged(hook_run.changes(subject), policy)


@pytest.mark.parametrize(
    ("reference", "keys"),
    [
        ("ghcr.io/example/operator:2.0.0", ["2.0.0"]),
        ("localhost:5000/operator:2.0.0", ["2.0.0"]),
        ("localhost:5000/operator", ["latest"]),
        ("operator@sha256:" + "b" * 64, ["sha256:" + "b" * 64]),
        ("operator:2.0.0@sha256:" + "b" * 64, ["sha256:" + "b" * 64, "2.0.0"]),
    ],
)
def test_image_keys(reference: str, keys: list[str]) -> None:
    assert image_keys(reference) == keys


PAIRING = [
    # (id, image, chart counters, refused code or None)
    ("matching tag", "example/operator:2.0.0", {"controller-state-version": 3}, None),
    ("other tag, same counters", "example/operator:2.0.1", {"controller-state-version": 3}, None),
    ("matching digest", "op@sha256:" + "a" * 64, {"controller-state-version": 3}, None),
    ("reuse-values: old tag", "example/operator:1.0.0", {"controller-state-version": 3}, "UG602"),
    ("tag not in the table", "example/operator:9.9.9", {"controller-state-version": 3}, "UG601"),
    ("no paired counter in the chart", "example/operator:9.9.9", {}, None),
]


@pytest.mark.parametrize(
    ("image", "counters", "refused"), [p[1:] for p in PAIRING], ids=[p[0] for p in PAIRING]
)
def test_pairing(image: str, counters: dict[str, int], refused: str | None) -> None:
    found = paired(counters, {"image": image}, TABLE)
    assert [f.code for f in found] == ([refused] if refused else [])
    if refused == "UG602":
        assert "goes with image 2.0.0 or 2.0.1" in found[0].message


CERT_MANAGER = parse_image_table(
    {
        "images": {
            "v1.18.0": {"controller-state-version": 1},
            "v1.19.0": {"controller-state-version": 2},
            "sha256:" + "c" * 64: {"controller-state-version": 2},
        }
    },
    "upgrade-guard/images.yaml",
)
SLOTS = {
    "image": "quay.io/jetstack/cert-manager-controller:v1.19.0",
    "webhook.image": "quay.io/jetstack/cert-manager-webhook:v1.19.0",
    "cainjector.image": "quay.io/jetstack/cert-manager-cainjector:v1.19.0",
}
V19 = {"controller-state-version": 2}


def _several(slots: dict[str, str]) -> list[Finding]:
    return paired(V19, slots, CERT_MANAGER)


SEVERAL = [
    # (id, slots changed from SLOTS, [(code, slot)] refused, the way out's setting)
    ("every image paired", {}, [], None),
    ("the webhook's old tag pinned", {"webhook.image": "jetstack/webhook:v1.18.0"},
     [("UG602", "webhook.image")], "[your flags] --set webhook.image.tag=v1.19.0`"),
    ("a digest pinned: the paired digest", {"image": "jetstack/controller@sha256:" + "d" * 64},
     [("UG601", "image")], "--set image.digest=sha256:" + "c" * 64),
    ("old tag and digest pinned", {"image": "c:v1.18.0@sha256:" + "d" * 64},
     [("UG602", "image")], "--set image.digest=sha256:" + "c" * 64),
    ("two slots wrong, each its own", {"image": "c:v1.18.0", "cainjector.image": "i:dev"},
     [("UG601", "cainjector.image"), ("UG602", "image")], "--set cainjector.image.tag=v1.19.0`"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("changed", "refused", "setting"), [c[1:] for c in SEVERAL], ids=[c[0] for c in SEVERAL]
)
def test_several_controller_images_each_checked_and_named(
    changed: dict[str, str], refused: list[tuple[str, str]], setting: str | None
) -> None:
    found = _several({**SLOTS, **changed})
    assert [(f.code, f.message.split(":", 1)[0]) for f in found] == refused
    for finding, (_, slot) in zip(found, refused, strict=True):
        image = {**SLOTS, **changed}[slot]
        assert finding.message.startswith(f"{slot}: the values deploy {image}")
    if setting:
        assert any(setting in hook_log.way_out(f, UNASKED) for f in found), found


def test_a_pinned_tag_is_never_told_to_reset_then_reuse_alone() -> None:
    """--reset-then-reuse-values keeps a tag the admin set, so it is not the way out alone:
    the way out sets the tag the table pairs with this chart, which wins over either."""
    (finding,) = _several({**SLOTS, "image": "quay.io/jetstack/cert-manager-controller:v1.18.0"})
    way_out = hook_log.way_out(finding, UNASKED)
    assert way_out.startswith(
        "`helm upgrade RELEASE CHART --reset-then-reuse-values [your flags]"
        " --set image.tag=v1.19.0`"
    )


def test_no_paired_image_in_the_table_says_so() -> None:
    (finding,) = paired({"controller-state-version": 9}, {"image": "c:v1.19.0"}, CERT_MANAGER)
    assert finding.code == "UG602"
    assert "no image in the chart's table compiles controller-state-version 9" in finding.message
    assert "--set" not in hook_log.way_out(finding, UNASKED)


def test_a_counter_marked_paired_is_checked_too() -> None:
    policy = parse_policy(
        {"counters": [{"name": "webhook", "rule": "monotonic", "paired-with-image": True}]}, "p"
    )
    table = parse_image_table({"images": {"2.0.0": {"webhook": 1}}}, "t")
    found = paired({"webhook": 2}, {"image": "op:2.0.0"}, table, policy)
    assert [f.code for f in found] == ["UG602"]
    assert paired({"webhook": 1}, {"image": "op:2.0.0"}, table, policy) == []


@pytest.mark.parametrize(
    "raw",
    [
        {"images": {}},
        {"images": {"1.0": {"controller-state-version": "01"}}},
        {"images": {"1.0": {}}},
        {"images": {"1.0": 3}},
        {"image": {}},
        [],
    ],
)
def test_bad_image_tables_are_refused(raw: Any) -> None:
    with pytest.raises(PolicyError, match="images"):
        parse_image_table(raw, "images.yaml")


def stamped(body: dict[str, Any], **annotations: str) -> Crd:
    body = copy.deepcopy(body)
    body["metadata"]["annotations"] = {f"upgrade-guard.io/{k}": v for k, v in annotations.items()}
    return Crd(body)


OLD = crd(version(schema=spec_schema(a={"type": "string"})))
NEW = crd(version(schema=spec_schema(a={"type": "string"}, b={"type": "string"})))
V = "crd-schema-version"
SCHEMA = [
    # (id, live CRD, chart CRD, codes)
    ("chart one version ahead", stamped(OLD, **{V: "1"}), stamped(NEW, **{V: "2"}), set()),
    ("live one version ahead", stamped(NEW, **{V: "2"}), stamped(OLD, **{V: "1"}), {"UG603"}),
    ("same version, same spec", stamped(OLD, **{V: "1"}), stamped(OLD, **{V: "1"}), {"UG607"}),
    ("same version, other spec", stamped(OLD, **{V: "1"}), stamped(NEW, **{V: "1"}), {"UG604"}),
    ("live not stamped", Crd(OLD), stamped(NEW, **{V: "1"}), {"UG606"}),
    ("chart not stamped", stamped(OLD, **{V: "1"}), Crd(NEW), set()),
]


@pytest.mark.parametrize(
    ("live_crd", "chart_crd", "codes"), [s[1:] for s in SCHEMA], ids=[s[0] for s in SCHEMA]
)
def test_schema_against_live(live_crd: Crd, chart_crd: Crd, codes: set[str]) -> None:
    chart, cluster = history.normalized({NAME: chart_crd}), history.normalized({NAME: live_crd})
    both = hook_run.both_sides(chart, cluster)
    found = judged(hook_run.changes(HookSubject(chart, cluster, both)))
    assert {f.code for f in found} == codes
    assert all(f.refuses == (f.code in {"UG603", "UG604"}) for f in found)


@pytest.mark.parametrize("admission_policy", [True, False], ids=["policy", "no policy"])
@pytest.mark.parametrize(
    ("live_crd", "chart_crd", "code"),
    [(s[1], s[2], min(s[3])) for s in SCHEMA if s[3] & {"UG603", "UG604"}],
    ids=[s[0] for s in SCHEMA if s[3] & {"UG603", "UG604"}],
)
def test_the_admission_policys_own_acceptance_is_named_where_the_release_applied_it(
    live_crd: Crd, chart_crd: Crd, code: str, admission_policy: bool
) -> None:
    """The policy the replaced release applied refuses the CRD update the hook accepts: the
    finding names the annotation that lets exactly it through there, the chart's digest."""
    digest = "sha256:" + "ab" * 32
    stamps = {k.removeprefix("upgrade-guard.io/"): v for k, v in chart_crd.annotations.items()}
    chart_crd = stamped(dict(chart_crd.raw), **stamps, **{"crd-schema-digest": digest})
    chart, cluster = history.normalized({NAME: chart_crd}), history.normalized({NAME: live_crd})
    both = hook_run.both_sides(chart, cluster)
    subject = HookSubject(chart, cluster, both, admission_policy=admission_policy)
    [found] = judged(hook_run.changes(subject))
    assert found.code == code
    told = [n for n in found.notes if n.startswith("admission policy: ")]
    assert told == (
        [
            "admission policy: the release's policy refuses this in the apiserver as well,"
            " accepted here or not; to let exactly this through there too: `kubectl annotate"
            f" crd {NAME} upgrade-guard.io/accept-schema-digest={digest} --overwrite`"
        ]
        if admission_policy
        else []
    )


def test_state_written_by_a_newer_release() -> None:
    written = [
        WrittenState(3, "widgets.example.com ns/a (status.stateVersion)"),
        WrittenState(2, "widgets.example.com ns/b (status.stateVersion)"),
    ]
    reads = {"controller-state-version": 2}
    found = judged(hook_run.changes(HookSubject(chart_counters=reads, written_state=written)))
    assert [f.code for f in found] == ["UG605"]
    assert "ns/a" in found[0].message and "ns/b" not in found[0].message
    reads = {"controller-state-version": 3}
    assert hook_run.changes(HookSubject(chart_counters=reads, written_state=written)).raw == ()


def test_state_on_live_crd_annotations() -> None:
    crds = {NAME: stamped(OLD, **{"controller-state-version": "4"})}
    assert hook_run.live_state(crds, DEFAULT_POLICY) == [
        WrittenState(4, f"CRD {NAME} (upgrade-guard.io/controller-state-version)")
    ]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"resource": "widgets.example.com", "path": "status.v"}, None),
        ({"resource": "configmaps", "version": "v1", "path": "data.v"}, None),
        ({"resource": "configmaps", "path": "data.v"}, "version is required"),
        ({"resource": "Widgets", "path": "status.v"}, "plural.group"),
        ({"resource": "widgets.example.com", "path": "status..v"}, "dotted field names"),
        ({"resource": "widgets.example.com", "path": "status.v", "kind": "x"}, "unknown key"),
    ],
)
def test_stored_state_policy(entry: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        assert parse_policy({"stored-state": [entry]}, "p").stored_state
    else:
        with pytest.raises(PolicyError, match=problem):
            parse_policy({"stored-state": [entry]}, "p")
