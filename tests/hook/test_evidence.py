"""Evidence for data-dependent findings: each classification beside the nearest other."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from upgrade_guard import engine, judging, rules
from upgrade_guard.apiserver import judge
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding, Harm, Outcome, Severity
from upgrade_guard.judging import Changes
from upgrade_guard.pipelines import evidence
from upgrade_guard.policy import DEFAULT_POLICY, Policy, parse_policy
from upgrade_guard.rules.kinds import PropertyRule, Rule
from upgrade_guard.subjects import HookSubject

STR: dict[str, Any] = {"type": "string"}


def spec_of(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def schema(spec: dict[str, Any]) -> dict[str, Any]:
    return spec_of({"spec": spec_of(spec)})


def obj(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "g.io/v1",
        "kind": "Thing",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def finding(code: str, path: str, severity: Severity = Severity.ERROR, *notes: str) -> Finding:
    return Finding(code, "rule", severity, "things.g.io", "v1", path, "message", notes=notes)


def harm(found: Finding) -> Harm:
    return rules.BY_CODE[found.code].harm


def target(found: Finding) -> evidence.Target:
    return evidence.Target(found.path, harm(found))


def judged(new: dict[str, Any], found: Finding, objects: list[dict[str, Any]]) -> Finding:
    collected = evidence.VersionEvidence(judge.Judge(schema(new), (1, 35)), [target(found)])
    for item in objects:
        collected.add(item)
    return evidence.classify(
        found,
        harm(found),
        collected.tallies.get(0),
        collected.checked,
        complete=True,
        strict=False,
        kind="things",
    )


ENUM = {"mode": {**STR, "enum": ["Full"]}}
LABELS = {"labels": {"type": "object", "additionalProperties": {**STR, "pattern": "^[a-z]+$"}}}
RATCHETED = "ratcheted on Kubernetes 1.35: updates that leave spec.mode unchanged pass"


@pytest.mark.parametrize(
    ("found", "new", "objects", "severity", "note"),
    [
        pytest.param(
            finding("UG207", "spec.mode", Severity.WARNING, RATCHETED),
            ENUM,
            [obj("a", {"mode": "Snapshot"}), obj("b", {"mode": "Full"})],
            Severity.ERROR,
            "evidence: 1 of 2 things affected: ns/a; refused on CREATE and on any change of"
            " spec.mode; other updates pass by ratcheting",
            id="confirmed-ratcheted-becomes-error",
        ),
        pytest.param(
            finding("UG207", "spec.mode", Severity.WARNING, RATCHETED),
            ENUM,
            [obj("b", {"mode": "Full"}), obj("c", {})],
            Severity.WARNING,
            "evidence: no stored object affected (2 checked)",
            id="not-affected-stays-warning",
        ),
        pytest.param(
            finding("UG207", "spec.mode"),
            ENUM,
            [obj("b", {"mode": "Full"})],
            Severity.WARNING,
            "evidence: no stored object affected (1 checked)",
            id="not-affected-error-becomes-warning",
        ),
        pytest.param(
            finding("UG201", "spec.legacy"),
            {},
            [obj("a", {"legacy": "x"}), obj("b", {})],
            Severity.ERROR,
            "evidence: 1 of 2 things affected: ns/a; they read back changed",
            id="confirmed-pruned",
        ),
        pytest.param(
            finding("UG201", "spec.legacy"),
            {},
            [obj("b", {})],
            Severity.WARNING,
            "evidence: no stored object affected (1 checked)",
            id="nothing-to-prune",
        ),
        pytest.param(
            finding("UG211", "spec.labels.a"),
            LABELS,
            [obj("a", {"labels": {"a": "B"}}), obj("b", {"labels": {"a": "b", "c": "C"}})],
            Severity.ERROR,
            "evidence: 1 of 2 things affected: ns/a; refused on CREATE and on any change of"
            " spec.labels.a; other updates pass by ratcheting",
            id="property-now-held-by-additional-properties",
        ),
        pytest.param(
            finding("UG211", "spec.labels.*"),
            LABELS,
            [obj("a", {"labels": {"a": "b"}}), obj("b", {"labels": {"c": "C"}})],
            Severity.ERROR,
            "evidence: 1 of 2 things affected: ns/b; refused on CREATE and on any change of"
            " spec.labels.*; other updates pass by ratcheting",
            id="any-key-of-additional-properties",
        ),
        pytest.param(
            finding("UG202", "spec.owner"),
            {"owner": STR},
            [obj("a", {})],
            Severity.ERROR,
            "evidence: 1 of 1 things affected: ns/a; refused on CREATE and on any change of"
            " spec; other updates pass by ratcheting",
            id="required-confirmed",
        ),
    ],
)
def test_classification(
    found: Finding,
    new: dict[str, Any],
    objects: list[dict[str, Any]],
    severity: Severity,
    note: str,
) -> None:
    spec = schema(new)["properties"]["spec"]
    if found.code == "UG202":
        spec["required"] = ["owner"]
        new_schema = {"type": "object", "properties": {"spec": spec}}
        collected = evidence.VersionEvidence(judge.Judge(new_schema, (1, 35)), [target(found)])
        for item in objects:
            collected.add(item)
        result = evidence.classify(
            found, harm(found), collected.tallies.get(0), collected.checked, complete=True,
            strict=False, kind="things",
        )  # fmt: skip
    else:
        result = judged(new, found, objects)
    assert result.severity is severity
    assert result.notes[-1] == note


def test_strict_keeps_the_error() -> None:
    found = finding("UG207", "spec.mode")
    result = evidence.classify(
        found, harm(found), evidence.Tally(), 4, complete=True, strict=True, kind="things"
    )
    assert result.severity is Severity.ERROR
    assert result.notes[-1].endswith("(4 checked) (strict policy: still an error)")


def test_limit_reached_is_not_checkable() -> None:
    found = finding("UG207", "spec.mode")
    result = evidence.classify(
        found, harm(found), evidence.Tally(), 500, complete=False, strict=False, kind="things"
    )
    assert result.severity is Severity.ERROR
    assert "not checkable: stopped at the limit of 500 things" in result.notes[-1]


RATCHETED = "ratcheted on Kubernetes 1.35: updates that leave spec.mode unchanged pass"
UNCHECKED = [
    # (id, severity, notes, severity once its objects could not be checked)
    ("a ratcheted warning becomes an error", Severity.WARNING, (RATCHETED,), Severity.ERROR),
    ("a warning of another kind stays", Severity.WARNING, (), Severity.WARNING),
    ("an error stays", Severity.ERROR, (), Severity.ERROR),
    ("a ratcheted info stays", Severity.INFO, (RATCHETED,), Severity.INFO),
]  # fmt: skip


@pytest.mark.parametrize(
    ("severity", "notes", "unchecked"), [c[1:] for c in UNCHECKED], ids=[c[0] for c in UNCHECKED]
)
def test_a_finding_whose_objects_could_not_be_checked_never_passes_where_they_could_refuse(
    severity: Severity, notes: tuple[str, ...], unchecked: Severity
) -> None:
    """A missing `list`, a conversion webhook, the limit: an affected object would have made a
    ratcheted warning an error, so unchecked it is one, saying why."""
    found = finding("UG207", "spec.mode", severity, *notes)
    why = "cannot list the stored things: forbidden: grant `list` on things.g.io"
    result = evidence.not_checkable(found, why)
    assert result.severity is unchecked
    assert result.notes[-1].startswith(f"evidence: not checkable: {why}")
    limited = evidence.classify(
        found, harm(found), evidence.Tally(), 500, complete=False, strict=False, kind="things"
    )
    assert limited.severity is unchecked


def test_no_object_values_in_notes() -> None:
    found = judged(ENUM, finding("UG207", "spec.mode"), [obj("a", {"mode": "SecretValue"})])
    assert not any("SecretValue" in n for n in found.notes)


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        (".", ()),
        ("spec.containers[].ports[].name", ("spec", "containers", "[]", "ports", "[]", "name")),
        ("spec.labels.*", ("spec", "labels", "*")),
        ('spec["a.b"].c', ("spec", "a.b", "c")),
    ],
)
def test_schema_segments(path: str, segments: tuple[str, ...]) -> None:
    assert evidence.schema_segments(path) == segments


TRANSITION = "self.size < 5 || self.size != oldSelf.size"  # a transition rule: never ratcheted


def things(spec: dict[str, Any]) -> Crd:
    """A CRD things.g.io whose spec carries the transition rule."""
    schema_ = schema(spec)
    schema_["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": TRANSITION}]
    return Crd({"metadata": {"name": "things.g.io"}, "spec": {"names": {"plural": "things"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                             "schema": {"openAPIV3Schema": schema_}}]}})  # fmt: skip


def things_of(spec: dict[str, Any]) -> Crd:
    """A CRD things.g.io whose one version's spec schema is ``spec``."""
    root = {"type": "object", "properties": {"spec": spec}}
    return Crd(
        {
            "metadata": {"name": "things.g.io"},
            "spec": {
                "group": "g.io",
                "names": {"plural": "things", "kind": "Thing"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1", "served": True, "storage": True,
                     "schema": {"openAPIV3Schema": root}},
                ],
            },
        }
    )  # fmt: skip


def with_evidence(
    changes: Changes,
    chart: Crd,
    live: Crd,
    stored: list[dict[str, Any]],
    policy: Policy = DEFAULT_POLICY,
    context: judging.Context | None = None,
) -> Outcome:
    """The outcome judged from ``changes`` of live into chart, with the evidence of the
    stored objects (every one listed), gathered before the changes are judged."""
    subject = HookSubject(chart={chart.name: chart}, live={live.name: live})
    gathered = evidence.Gathered(changes, subject, (1, 35), strict=False, evidence=True)
    for name in gathered.crds:
        for item in stored:
            gathered.add(name, item)
        gathered.listed(name, evidence.Listed(complete=True, problem=None))
    return judging.judge(changes, policy, replace(context or judging.Context(), evidence=gathered))


@pytest.mark.parametrize("accepted", [False, True], ids=["refused", "accepted"])
def test_the_admin_accepts_the_finding_as_evidence_made_it(accepted: bool) -> None:
    """One judge: the stored object makes the ratcheted warning an error, and the cluster
    admin's acceptance of that error (the report's accept: entry) takes; it used to be
    matched before the evidence, against a warning, and so accepted nothing (UG903)."""
    old, new = (
        things_of({"type": "object", "properties": {"mode": STR}}),
        things_of({"type": "object", "properties": {"mode": {**STR, "enum": ["Full"]}}}),
    )
    changes = engine.changes_between({old.name: old}, {new.name: new}, DEFAULT_POLICY)
    entry = judging.Acceptance("2.0.0", "UG207", "things.g.io", "v1", "spec.mode")
    context = judging.Context(
        kube_version=(1, 35), chart_version="2.0.0", acceptances=(entry,) if accepted else ()
    )
    outcome = with_evidence(changes, new, old, [obj("a", {"mode": "Snapshot"})], context=context)
    (result,) = outcome.findings
    assert (result.code, result.severity) == ("UG207", Severity.ERROR), outcome
    assert result.notes[-1].startswith("evidence: 1 of 1 things affected: ns/a")
    assert outcome.safe is accepted, outcome


ENUM_BREAK = {"crd": "things.g.io", "rule": "UG207", "path": "spec.mode", "reason": "meant"}


@pytest.mark.parametrize(
    ("stored", "notes"),
    [
        pytest.param(
            [obj("a", {"mode": "Snapshot"}), obj("b", {"mode": "Full"})],
            (
                "evidence: excused, though confirmed: 1 of 2 things affected: ns/a; refused on"
                " CREATE and on any change of spec.mode; other updates pass by ratcheting",
            ),
            id="confirmed: still excused, and says so",
        ),
        pytest.param([obj("b", {"mode": "Full"})], (), id="no object affected: nothing to say"),
    ],
)
def test_a_declared_break_excusing_a_finding_objects_confirm_says_so(
    stored: list[dict[str, Any]], notes: tuple[str, ...]
) -> None:
    """Issue 34 §7: the break was written without this cluster's objects (offline, by
    ``diff --declare-breaks``); it still excuses, and the finding tells what they show."""
    old, new = things({"mode": STR}), things({"mode": {**STR, "enum": ["Full"]}})
    policy = parse_policy({"declared-breaks": [ENUM_BREAK]}, "p")
    changes = engine.changes_between({old.name: old}, {new.name: new}, policy)
    outcome = with_evidence(changes, new, old, stored, policy)
    (result,) = outcome.findings
    assert (result.code, result.path, result.excused, result.severity) == (
        "UG207", "spec.mode", "meant", Severity.ERROR
    )  # fmt: skip
    assert result.notes == notes and outcome.safe


def test_objects_failing_where_no_finding_points_are_reported() -> None:
    """A write that fails for a reason the diff did not name (here a transition rule, as if
    the live CRD had it already) is counted on the CRD's first data finding."""
    size = {"size": {"type": "integer", "maximum": 3}}
    old, new = things({"mode": STR, **size}), things({"mode": {**STR, "enum": ["Full"]}, **size})

    changes = engine.changes_between({old.name: old}, {new.name: new}, DEFAULT_POLICY)
    outcome = with_evidence(changes, new, old, [obj("a", {"mode": "Full", "size": 9})])
    (result,) = outcome.findings
    assert (result.code, result.path) == ("UG207", "spec.mode")
    assert result.notes[-1] == (
        "evidence: also 1 things would fail their next update where no finding points: ns/a"
    )


def test_a_write_failing_where_only_an_excused_finding_points_is_where_no_finding_points() -> None:
    """The stored objects are read before the changes are judged, for every data change; a
    place only a change the judge made no finding of (its rule ignored by the policy) points
    at counts as one no finding points at, as the findings the judge made are all that is
    reported (an excused one included: it says what the objects show)."""
    size = {"size": {"type": "integer", "maximum": 3}}
    collected = evidence.VersionEvidence(
        judge.Judge(things({"mode": STR, **size}).schemas["v1"], (1, 35)),
        [target(finding("UG207", "spec.mode")), target(finding("UG219", "spec"))],
    )
    collected.add(obj("a", {"mode": "Full", "size": 9}))
    collected.add(obj("b", {"mode": "Full", "size": 1}))
    assert collected.unpredicted({0, 1}) == (0, [])
    assert collected.unpredicted({0}) == (1, ["ns/a"])


def test_fields_declared_where_unknown_fields_were_kept_are_judged_by_the_stored_objects() -> None:
    """Issue 22 §1: each declaration under a node that kept unknown fields is a data finding,
    confirmed by the objects that hold what it no longer accepts and cleared where none do;
    findings at one path each count only their own harm (what is refused, what reads back
    changed)."""
    keeps = {"x-kubernetes-preserve-unknown-fields": True}
    loose = {**keeps, "nullable": True}

    def crd(spec: dict[str, Any]) -> Crd:
        return things_of({"type": "object", **keeps, **spec})

    old = crd({})
    new = crd(
        {
            "properties": {
                "foo": {"type": "object", "properties": {"a": STR}},
                "num": {"type": "integer", "nullable": True},
                "mode": {**loose, "default": "fast"},
                "color": {**loose, "enum": ["red"]},
            }
        }
    )
    stored = [
        obj("pruned", {"foo": {"a": "x", "b": "y"}, "mode": "m"}),
        obj("null", {"foo": None, "mode": "m"}),
        obj("typed", {"num": "eight", "mode": "m"}),
        obj("bare", {"color": "red"}),
    ]
    changes = engine.changes_between({"things.g.io": old}, {"things.g.io": new}, DEFAULT_POLICY)
    found = with_evidence(changes, new, old, stored)
    said = {(f.code, f.path): (f.severity, f.notes[-1]) for f in found.findings}
    affected = "evidence: {} of 4 things affected: {}"
    assert said == {
        ("UG204", "spec.foo"): (Severity.WARNING,
                                "evidence: no stored object affected (4 checked)"),
        ("UG205", "spec.foo"): (Severity.ERROR, affected.format(2, "ns/pruned, ns/null")
                                + "; they read back changed"),
        ("UG216", "spec.foo"): (Severity.ERROR, affected.format(2, "ns/pruned, ns/null")
                                + "; they read back changed"),
        ("UG204", "spec.num"): (Severity.ERROR, affected.format(1, "ns/typed")
                                + "; refused on CREATE and on any change of spec.num;"
                                " other updates pass by ratcheting"),
        ("UG212", "spec.mode"): (Severity.ERROR, affected.format(1, "ns/bare")
                                 + "; they read back changed"),
        ("UG207", "spec.color"): (Severity.WARNING,
                                  "evidence: no stored object affected (4 checked)"),
    }  # fmt: skip


def test_only_schema_node_rules_have_a_harm() -> None:
    """Evidence matches objects with a finding's schema path: only a schema node rule's
    finding has one pointing into objects."""
    harmful = [rule for rule in rules.ALL_RULES if rule.harm is not Harm.NONE]
    assert harmful and all(isinstance(rule, PropertyRule) for rule in harmful)


@pytest.mark.parametrize(
    "rule", [r for r in rules.ALL_RULES if r.harm is not Harm.NONE], ids=lambda r: r.code
)
def test_a_confirmed_finding_says_its_rules_harm(rule: Rule) -> None:
    found = finding(rule.code, "spec.mode")
    tally = evidence.Tally(affected=1, names=["ns/a"])
    result = evidence.classify(
        found, rule.harm, tally, 1, complete=True, strict=False, kind="things"
    )
    read_back = result.notes[-1].endswith("; they read back changed")
    assert read_back is (rule.harm is Harm.CHANGED_ON_READ)


def test_evidence_counts_each_rules_harm_and_none_where_it_has_none() -> None:
    """An embedded resource turned on (UG217, both) is confirmed by an object refused on
    CREATE and by one that reads back changed; a map-type change (UG215, none: no stored
    value decides it) gets no evidence."""
    keeps = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    old = things_of(spec_of({"t": keeps, "m": {**keeps, "x-kubernetes-map-type": "granular"}}))
    new = things_of(
        spec_of(
            {
                "t": {**keeps, "x-kubernetes-embedded-resource": True},
                "m": {**keeps, "x-kubernetes-map-type": "atomic"},
            }
        )
    )
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    stored = [
        obj("kindless", {"t": {"name": "p"}}),
        obj("pruned", {"t": {**pod, "metadata": {"name": "p", "unknown": "x"}}}),
        obj("pod", {"t": pod}),
    ]
    changes = engine.changes_between({old.name: old}, {new.name: new}, DEFAULT_POLICY)
    found = with_evidence(changes, new, old, stored)
    said = {(f.code, f.path): f.notes[-1] if f.notes else None for f in found.findings}
    assert rules.BY_CODE["UG217"].harm is Harm.BOTH
    assert rules.BY_CODE["UG215"].harm is Harm.NONE
    assert said[("UG217", "spec.t")].startswith(
        "evidence: 2 of 3 things affected: ns/kindless, ns/pruned"
    )
    assert not (said[("UG215", "spec.m")] or "").startswith("evidence:")
