"""Declared breaks at the scale of real releases: path globs, groups by change, entries
written from findings, typo hints, and why a scoped break did not apply."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from corpus import require_corpus
from crd_builders import NAME, compare, crd, obj, spec_schema, version
from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Outcome
from upgrade_guard.judging import Context, judge
from upgrade_guard.pipelines import hook_run
from upgrade_guard.policy import (
    DEFAULT_POLICY,
    SCHEMA_VERSION,
    Policy,
    PolicyError,
    declared_break_entries,
    parse_policy,
)
from upgrade_guard.subjects import Release
from upgrade_guard.write.declared_breaks import append_declared_breaks

STR = {"type": "string"}
LONG = {"type": "string", "minLength": 1}


def two_receivers(node: dict[str, Any]) -> dict[str, Any]:
    """receivers[].name and receivers[].url, both with node, and other.name too."""
    receiver = {"type": "object", "properties": {"name": node, "url": node}}
    return crd(
        version(
            schema=spec_schema(receivers={"type": "array", "items": receiver}, other=obj(name=node))
        )
    )


OLD, NEW = two_receivers(STR), two_receivers(LONG)


def judged(*breaks: dict[str, Any]) -> Outcome:
    return compare(OLD, NEW, policy=parse_policy({"declared-breaks": list(breaks)}, "p"))


def excused_paths(outcome: Outcome) -> list[str | None]:
    return sorted(f.path or "" for f in outcome.findings if f.excused)


def refused(outcome: Outcome) -> list[tuple[str, str | None]]:
    return sorted((f.code, f.path) for f in outcome.findings if f.refuses)


def entry(**fields: Any) -> dict[str, Any]:
    return {"crd": NAME, "rule": "bound-tightened", "reason": "names were never empty", **fields}


# Each excusing declaration beside the nearest one that does not excuse the same finding.
@pytest.mark.parametrize(
    ("declared", "excused"),
    [
        pytest.param(
            entry(path="spec.receivers[].*"),
            ["spec.receivers[].name", "spec.receivers[].url"],
            id="star-one-segment",
        ),
        pytest.param(
            entry(path="spec.*.name"),
            ["spec.other.name", "spec.receivers[].name"],
            id="star-is-one-segment-brackets-included",
        ),
        pytest.param(
            entry(path="spec.**.name"),
            ["spec.other.name", "spec.receivers[].name"],
            id="double-star-any-depth",
        ),
        pytest.param(
            entry(path="spec.**"),
            ["spec.other.name", "spec.receivers[].name", "spec.receivers[].url"],
            id="double-star-all",
        ),
        pytest.param(
            entry(crd="*.example.com", path="spec.other.name"), ["spec.other.name"], id="crd-glob"
        ),
        pytest.param(
            entry(old=None, new=1),
            ["spec.other.name", "spec.receivers[].name", "spec.receivers[].url"],
            id="group-same-change",
        ),
        pytest.param(
            entry(old=None, new=1, path="spec.receivers[].*"),
            ["spec.receivers[].name", "spec.receivers[].url"],
            id="group-within-glob",
        ),
    ],
)
def test_one_declaration_excuses_many_findings(
    declared: dict[str, Any], excused: list[str]
) -> None:
    outcome = judged(declared)
    assert excused_paths(outcome) == excused
    assert all(f.code == "UG208" for f in outcome.findings if f.refuses)


@pytest.mark.parametrize(
    "declared",
    [
        pytest.param(entry(path="spec.receivers.*"), id="items-need-brackets"),
        pytest.param(entry(old=None, new=2), id="group-other-change"),
        pytest.param(entry(old=1, new=None), id="group-reversed-change"),
        pytest.param(entry(rule="pattern-changed", old=None, new=1), id="group-other-rule"),
        pytest.param(entry(crd="*.example.org", old=None, new=1), id="crd-glob-elsewhere"),
    ],
)
def test_near_misses_excuse_nothing_and_are_refused_as_unused(declared: dict[str, Any]) -> None:
    outcome = judged(declared)
    assert excused_paths(outcome) == []
    assert ("UG902", declared.get("path")) in refused(outcome)


def test_a_group_names_both_old_and_new() -> None:
    with pytest.raises(PolicyError, match=r"declared-breaks\[0\]: a group names both old and new"):
        parse_policy({"declared-breaks": [entry(new=1)]}, "p")


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (
            {"crd": NAME, "rule": "UG208", "pth": "spec.x", "reason": "r"},
            "unknown key 'pth' (did you mean 'path'?)",
        ),
        (
            {"crd": NAME, "rule": "bound-tighten", "reason": "r"},
            "unknown rule 'bound-tighten' (did you mean 'bound-tightened'?)",
        ),
        (
            {"crd": NAME, "rule": "UG208", "reason": ""},
            "reason is empty: say why this break is meant",
        ),
    ],
)
def test_policy_mistakes_are_refused_with_a_hint(declared: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_policy({"declared-breaks": [declared]}, "p")
    assert message in str(raised.value)


def test_an_unused_break_suggests_the_nearest_path() -> None:
    outcome = judged(entry(path="spec.other.nme"))
    unused = [f for f in outcome.findings if f.code == "UG902"]
    assert unused[0].message.endswith("(did you mean 'spec.other.name'?)")


def test_an_unused_break_suggests_the_nearest_crd() -> None:
    outcome = judged(entry(crd="widget.example.com", path="spec.other.name"))
    unused = [f for f in outcome.findings if f.code == "UG902"]
    assert unused[0].message.endswith(f"(did you mean {NAME!r}?)")


def gadgets(body: dict[str, Any]) -> dict[str, Any]:
    """The same CRD under another name of the same group."""
    spec = {**body["spec"], "names": {**body["spec"]["names"], "plural": "gadgets"}}
    return {**body, "metadata": {"name": "gadgets.example.com"}, "spec": spec}


def with_third(body: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """body with spec.third as node."""
    body = copy.deepcopy(body)
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "third"
    ] = node
    return body


# The next release tightens one more path of each CRD the same way: no break written for
# the release before may excuse it.
BEFORE, AFTER, NEXT = with_third(OLD, STR), with_third(NEW, STR), with_third(NEW, LONG)
SCHEMA_KEY = "upgrade-guard.io/crd-schema-version"


def crds(*bodies: dict[str, Any], schema_version: int) -> dict[str, Crd]:
    stamped_bodies = (stamped(body, schema_version) for body in bodies)
    return {body["metadata"]["name"]: Crd(body) for body in stamped_bodies}


def hook_judgement(live: dict[str, Crd], chart: dict[str, Crd], policy: Policy) -> Outcome:
    """What the hook's judge makes of replacing the live CRDs with the chart's: its schema
    comparison and checks, on a cluster that ratchets, within the release the two cross
    (pipelines/hook_run.py)."""
    subject = replace(hook_run.subject_for(policy, chart, {}, {}, None), live=live)
    compared = engine.changes_between(live, chart, policy)
    release = Release.between(live, chart, policy.annotation(SCHEMA_VERSION))
    context = Context(kube_version=(1, 33), release=release)
    return judge(hook_run.changes(subject, compared), policy, context)


def test_written_entries_name_each_place_and_the_hook_excuses_exactly_those() -> None:
    """Issue 34 §7: one entry per finding's place (CRD, version, path, schema version), never
    a group's glob (``*.example.com`` at any path), so the diff and the hook both excuse
    exactly the findings it was written for, and the next release's finding still refuses."""
    old = crds(BEFORE, gadgets(BEFORE), schema_version=2)
    new = crds(AFTER, gadgets(AFTER), schema_version=3)
    outcome = judge(
        engine.changes_between(old, new), DEFAULT_POLICY, Context(release=Release(2, 3))
    )
    found = sorted((f.crd, f.version, f.path) for f in outcome.findings if f.refuses)
    entries = declared_break_entries(outcome.findings, 3)
    assert all(count == 1 for count, _ in entries)
    written = sorted((e["crd"], e["version"], e["path"]) for _, e in entries)
    assert written == found and len(found) == 6
    assert all(e["rule"] == "bound-tightened" and e["schema-version"] == 3 for _, e in entries)
    assert not any("*" in str(value) for _, e in entries for value in e.values())
    filled = parse_policy({"declared-breaks": [{**e, "reason": "r"} for _, e in entries]}, "p")
    for judged_now in (
        judge(engine.changes_between(old, new, filled), filled, Context(release=Release(2, 3))),
        hook_judgement(old, new, filled),
    ):
        assert judged_now.safe
        assert sorted((f.crd, f.version, f.path) for f in judged_now.findings if f.excused) == found
    # the next release tightens spec.third the same way: not excused, even by the breaks
    # without their schema version (the hook's cluster ratchets: warnings)
    unscoped = [{k: v for k, v in e.items() if k != "schema-version"} for _, e in entries]
    unscoped_policy = parse_policy(
        {"declared-breaks": [{**e, "reason": "r"} for e in unscoped]}, "p"
    )
    for policy in (filled, unscoped_policy):
        later = hook_judgement(new, crds(NEXT, gadgets(NEXT), schema_version=4), policy)
        assert sorted((f.code, f.path, f.excused) for f in later.findings if f.code != "UG902") == [
            ("UG208", "spec.third", None),
            ("UG208", "spec.third", None),
        ]


def test_written_policy_appends_under_existing_breaks_keeping_the_rest(tmp_path: Path) -> None:
    policy = tmp_path / ".upgrade-guard.yaml"
    before = (
        "# our policy\n"
        "profile: default\n"
        "declared-breaks:\n"
        "  - crd: a.example.com   # kept\n"
        "    rule: UG201\n"
        "    path: spec.x\n"
        "    reason: old news\n"
        "rules:\n"
        "  UG107: error\n"
    )
    policy.write_text(before)
    append_declared_breaks(policy, declared_break_entries(compare(OLD, NEW).findings))
    after = policy.read_text()
    assert after.startswith(before[: before.index("rules:")])
    assert after.endswith("rules:\n  UG107: error\n")
    breaks = yaml.safe_load(after)["declared-breaks"]
    assert [b["reason"] for b in breaks] == ["old news", "", "", ""]
    assert "  - crd: widgets.example.com\n" in after and '    reason: ""\n' in after


PROMETHEUS = ("prometheus-operator", "v0.85.0", "v0.90.0")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "upgrade_guard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_real_release_is_declared_place_by_place(tmp_path: Path) -> None:
    project, old, new = PROMETHEUS
    root = require_corpus() / project
    (tmp_path / ".git").mkdir()
    first = run(
        tmp_path, "diff", str(root / old), str(root / new), "--declare-breaks", "--output", "json"
    )
    assert first.returncode == 1
    report = json.loads(first.stdout)
    found = report["summary"]["error"]
    places = {(f["crd"], f["rule"], f["version"], f["path"]) for f in report["findings"]}
    written = yaml.safe_load((tmp_path / ".upgrade-guard.yaml").read_text())["declared-breaks"]
    # one entry per place: 117 for 122 findings when this was written, none a glob
    assert {(b["crd"], b["rule"], b.get("version"), b.get("path")) for b in written} == places
    assert len(written) == len(places) and not any("*" in b["crd"] for b in written)
    unfilled = run(tmp_path, "diff", str(root / old), str(root / new))
    assert unfilled.returncode == 2
    assert "reason is empty" in unfilled.stderr
    text = (tmp_path / ".upgrade-guard.yaml").read_text().replace('reason: ""', "reason: reviewed")
    (tmp_path / ".upgrade-guard.yaml").write_text(text)
    filled = run(tmp_path, "diff", str(root / old), str(root / new), "--output", "json")
    assert filled.returncode == 0, filled.stdout
    assert json.loads(filled.stdout)["summary"]["excused"] == found


def stamped(body: dict[str, Any], schema_version: int) -> dict[str, Any]:
    annotations = {"upgrade-guard.io/crd-schema-version": str(schema_version)}
    return {**body, "metadata": {**body["metadata"], "annotations": annotations}}


@pytest.mark.parametrize(
    ("old_version", "new_version", "why"),
    [
        (2, 3, "this release goes from schema version 2 to 3"),
        (3, 3, "the schema version does not rise (3 -> 3)"),
    ],
)
def test_a_break_for_another_schema_version_says_why_it_did_not_apply(
    tmp_path: Path, old_version: int, new_version: int, why: str
) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(stamped(OLD, old_version)))
    new.write_text(yaml.safe_dump(stamped(NEW, new_version)))
    (tmp_path / ".git").mkdir()
    policy = {"declared-breaks": [entry(old=None, new=1, **{"schema-version": 4})]}
    (tmp_path / ".upgrade-guard.yaml").write_text(yaml.safe_dump(policy))
    result = run(tmp_path, "diff", "old.yaml", "new.yaml", "--output", "json")
    assert result.returncode == 1
    findings = json.loads(result.stdout)["findings"]
    assert len(findings) == 3
    for finding in findings:
        assert finding["notes"] == [
            f"declared break UG208 on {NAME} changing null -> 1 (schema version 4)"
            f" not applied: {why}"
        ]


def test_the_break_for_the_crossed_version_applies_without_a_note(tmp_path: Path) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(stamped(OLD, 3)))
    new.write_text(yaml.safe_dump(stamped(NEW, 4)))
    (tmp_path / ".git").mkdir()
    policy = {"declared-breaks": [entry(old=None, new=1, **{"schema-version": 4})]}
    (tmp_path / ".upgrade-guard.yaml").write_text(yaml.safe_dump(policy))
    result = run(tmp_path, "diff", "old.yaml", "new.yaml", "--output", "json")
    assert result.returncode == 0, result.stdout
    assert all(f["excused"] and not f["notes"] for f in json.loads(result.stdout)["findings"])


# A declared break without a schema version, as `--declare-breaks` wrote them before it
# wrote one: once the release it was declared for is applied (live == chart), it excuses
# nothing and is idle, not stale; on a comparison where its CRD does change, matching nothing
# is still refused.
UNSCOPED = entry(old=None, new=1)
OTHER_CHANGE = two_receivers({"type": "string", "maxLength": 9})


@pytest.mark.parametrize(
    ("old", "new", "refused_codes"),
    [
        pytest.param(NEW, NEW, [], id="live-equals-chart: idle"),
        pytest.param(OLD, NEW, [], id="the release it was declared for: excuses"),
        pytest.param(NEW, OTHER_CHANGE, ["UG208", "UG902"], id="a real change it misses: stale"),
    ],
)
def test_a_declared_break_stays_true_across_releases(
    old: dict[str, Any], new: dict[str, Any], refused_codes: list[str]
) -> None:
    outcome = compare(old, new, policy=parse_policy({"declared-breaks": [UNSCOPED]}, "p"))
    assert sorted({f.code for f in outcome.findings if f.refuses}) == refused_codes


def test_declare_breaks_writes_the_schema_version_the_release_ships(tmp_path: Path) -> None:
    """The entries apply to the release they were written for: after it (live == chart, at
    the same schema version) and on the next one (a different change), they are skipped,
    not refused as unused."""
    (tmp_path / ".git").mkdir()
    for name, body in (("v2", stamped(OLD, 2)), ("v3", stamped(NEW, 3)),
                       ("v4", stamped(OTHER_CHANGE, 4))):  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(body))
    declared = run(tmp_path, "diff", "v2.yaml", "v3.yaml", "--declare-breaks")
    assert declared.returncode == 1, declared.stdout
    policy = tmp_path / ".upgrade-guard.yaml"
    written = yaml.safe_load(policy.read_text())["declared-breaks"]
    assert {b["schema-version"] for b in written} == {3} and len(written) == 3
    policy.write_text(policy.read_text().replace('reason: ""', "reason: names were never empty"))
    assert run(tmp_path, "diff", "v2.yaml", "v3.yaml").returncode == 0
    same = run(tmp_path, "diff", "v3.yaml", "v3.yaml", "--output", "json")
    assert same.returncode == 0, same.stdout
    assert json.loads(same.stdout)["findings"] == []
    later = run(tmp_path, "diff", "v3.yaml", "v4.yaml", "--output", "json")
    assert later.returncode == 1
    codes = {f["code"] for f in json.loads(later.stdout)["findings"]}
    assert "UG208" in codes and "UG902" not in codes  # the new change, not the old break
