"""verify-history over the controllers' declarations (issue 24): finalizers and condition
vocabulary, each side's as its own tree's policy declares it (the schema's enum on
status.conditions[].type where the policy declares none). Each refusal beside the nearest
change that passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from history_kit import GitRepo, codes, widget

from crd_builders import crd, version
from upgrade_guard.policy import PolicyError, parse_policy

NAME = "widgets.example.com"
EXAMPLE = Path(__file__).resolve().parents[2] / "chart-snippets" / "example"
POLICY = ".upgrade-guard.yaml"


def declared(**fields: Any) -> dict[str, Any]:
    return {"controllers": [{"crd": NAME, **fields}]}


def with_condition_enum(*types: str) -> dict[str, Any]:
    """widgets.example.com whose status.conditions[].type is an enum of types."""
    condition = {"type": "object", "properties": {"type": {"type": "string", "enum": list(types)}}}
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "string"}}},
            "status": {
                "type": "object",
                "properties": {"conditions": {"type": "array", "items": condition}},
            },
        },
    }
    return crd(version(schema=schema))


def history(
    repo: GitRepo,
    before: dict[str, Any],
    after: dict[str, Any],
    old_crd: dict[str, Any] | None = None,
    new_crd: dict[str, Any] | None = None,
) -> tuple[set[str], dict[str, Any]]:
    """Commit the baseline (policy and CRD), then the candidate; verify HEAD against HEAD^."""
    repo.write(POLICY, yaml.safe_dump(before))
    repo.release(old_crd or widget(), schema_version=1)
    repo.write(POLICY, yaml.safe_dump(after))
    changed = new_crd is not None and new_crd != (old_crd or widget())
    repo.release(new_crd or old_crd or widget(), schema_version=2 if changed else 1)
    code, report = repo.verify()
    assert code == (1 if codes(report) else 0), report
    return codes(report), report


CLEANUP, CLEANUP_V2 = "example.com/cleanup", "example.com/cleanup-v2"
MIGRATED = [{"finalizer": CLEANUP, "migration": "2.0 replaces it on every Widget it reconciles"}]
ROWS = [
    # (id, baseline policy, candidate policy, refused code or None)
    ("finalizer kept", declared(finalizers=[CLEANUP]), declared(finalizers=[CLEANUP]), None),
    ("finalizer added", declared(finalizers=[CLEANUP]),
     declared(finalizers=[CLEANUP, CLEANUP_V2]), None),
    ("finalizer renamed", declared(finalizers=[CLEANUP]), declared(finalizers=[CLEANUP_V2]),
     "UG721"),
    ("finalizer renamed with a migration", declared(finalizers=[CLEANUP]),
     declared(finalizers=[CLEANUP_V2], **{"retired-finalizers": MIGRATED}), None),
    ("declaration dropped", declared(finalizers=[CLEANUP]), {}, "UG721"),
    ("type kept", declared(conditions={"Ready": None}), declared(conditions={"Ready": None}),
     None),
    ("type added", declared(conditions={"Ready": None}),
     declared(conditions={"Ready": None, "Degraded": None}), None),
    ("type removed", declared(conditions={"Ready": None, "Degraded": None}),
     declared(conditions={"Ready": None}), "UG722"),
    ("type removed with a break", declared(conditions={"Ready": None, "Degraded": None}),
     declared(conditions={"Ready": None},
              **{"condition-breaks": [{"type": "Degraded", "reason": "folded into Ready"}]}),
     None),
    ("conditions no longer declared", declared(conditions={"Ready": None}), {}, "UG722"),
    ("reason kept", declared(conditions={"Ready": ["Done", "Failed"]}),
     declared(conditions={"Ready": ["Done", "Failed"]}), None),
    ("reasons declared where none were", declared(conditions={"Ready": None}),
     declared(conditions={"Ready": ["Done"]}), None),
    ("reason removed", declared(conditions={"Ready": ["Done", "Failed"]}),
     declared(conditions={"Ready": ["Done"]}), "UG723"),
    ("reasons no longer declared", declared(conditions={"Ready": ["Done"]}),
     declared(conditions={"Ready": None}), "UG723"),
    ("reason removed with a break", declared(conditions={"Ready": ["Done", "Failed"]}),
     declared(conditions={"Ready": ["Done"]}, **{"condition-breaks": [
         {"type": "Ready", "condition-reasons": ["Failed"], "reason": "Failed is Done=False"}]}),
     None),
    ("a break for another reason", declared(conditions={"Ready": ["Done", "Failed"]}),
     declared(conditions={"Ready": ["Done"]}, **{"condition-breaks": [
         {"type": "Ready", "condition-reasons": ["Timeout"], "reason": "never set"}]}),
     "UG723"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("before", "after", "refused"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_declarations_between_releases(
    repo: GitRepo, before: dict[str, Any], after: dict[str, Any], refused: str | None
) -> None:
    found, report = history(repo, before, after)
    assert found == ({refused} if refused else set()), report
    if refused:
        (finding,) = [f for f in report["findings"] if f["code"] == refused]
        assert finding["crd"] == NAME


ENUM_ROWS = [
    ("enum widened", ("Ready",), ("Ready", "Degraded"), {}, None),
    ("enum narrowed", ("Ready", "Degraded"), ("Ready",), {}, "UG722"),
    ("enum narrowed with a break", ("Ready", "Degraded"), ("Ready",),
     declared(**{"condition-breaks": [{"type": "Degraded", "reason": "folded into Ready"}]}),
     None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "after", "refused"), [r[1:] for r in ENUM_ROWS], ids=[r[0] for r in ENUM_ROWS]
)
def test_the_schemas_condition_type_enum_is_the_vocabulary_where_the_policy_declares_none(
    repo: GitRepo,
    old: tuple[str, ...],
    new: tuple[str, ...],
    after: dict[str, Any],
    refused: str | None,
) -> None:
    found, report = history(repo, {}, after, with_condition_enum(*old), with_condition_enum(*new))
    # Narrowing the enum is also the engine's enum-restricted (UG207) on the storage version.
    assert found - {"UG207"} == ({refused} if refused else set()), report


def test_an_uncommitted_policy_change_is_compared_with_head(repo: GitRepo) -> None:
    """The policy's declarations are history too: editing only the policy makes the working
    tree the candidate, as editing a CRD does."""
    repo.write(POLICY, yaml.safe_dump(declared(finalizers=[CLEANUP])))
    repo.release(widget(), schema_version=1)
    repo.write(POLICY, yaml.safe_dump(declared(finalizers=[CLEANUP_V2])))
    code, report = repo.verify()
    assert (code, codes(report)) == (1, {"UG721"}), report
    assert report["history"]["candidate"] == "working tree"
    message = next(f["message"] for f in report["findings"] if f["code"] == "UG721")
    assert message == (
        f"finalizer {CLEANUP} is no longer handled and no retired-finalizers entry says how"
        " stored objects lose it"
    )


@pytest.mark.parametrize(
    ("controller", "message"),
    [
        ({"finalizers": [CLEANUP], "retired-finalizers": MIGRATED},
         f"controllers[0]: {CLEANUP} both handled and retired: keep one"),
        ({"conditions": {"Ready": None},
          "condition-breaks": [{"type": "Ready", "reason": "r"}]},
         "controllers[0]: condition type Ready is declared and broken: keep one"),
        ({"conditions": {"Ready": ["Done"]},
          "condition-breaks": [{"type": "Ready", "condition-reasons": ["Done"], "reason": "r"}]},
         "controllers[0]: condition type Ready is declared and broken: keep one"),
        ({"retired-finalizers": [{"finalizer": CLEANUP}]},
         "controllers[0].retired-finalizers[0]: migration is required"),
    ],
)  # fmt: skip
def test_a_contradictory_declaration_is_bad_input(controller: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_policy(declared(**controller), "policy.yaml")
    assert message in str(raised.value)


def test_a_crd_declared_twice_is_bad_input() -> None:
    with pytest.raises(PolicyError) as raised:
        parse_policy({"controllers": [{"crd": NAME}, {"crd": NAME}]}, "policy.yaml")
    assert f"controllers[1]: {NAME} is declared twice" in str(raised.value)


def test_the_example_charts_finalizer_rename_passes_with_its_migration_only(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "chart")
    for release in ("3.0.0", "4.0.0"):
        for part in ("templates/crds", "upgrade-guard/policy.yaml"):
            source, target = EXAMPLE / release / part, repo.root / part
            if source.is_dir():
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(source, target)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)
        repo.commit(release)
    args = ("verify-history", "templates/crds", "--policy", "upgrade-guard/policy.yaml",
            "--baseline-ref", "HEAD^")  # fmt: skip
    done = repo.ug(*args, "--output", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    policy = repo.root / "upgrade-guard" / "policy.yaml"
    declared = yaml.safe_load(policy.read_text())
    del declared["controllers"][0]["retired-finalizers"]
    policy.write_text(yaml.safe_dump(declared))
    done = repo.ug(*args, "--output", "json")
    assert done.returncode == 1 and codes(json.loads(done.stdout)) == {"UG721"}, done.stdout


def test_only_the_baselines_controllers_are_read(repo: GitRepo) -> None:
    """A baseline policy is read for its declarations only: what else it held (here a break
    left without its reason, which the tool refuses in a policy in use) is the business of
    the tool version that read it then."""
    stale = {"crd": NAME, "rule": "UG201", "path": "spec.x", "reason": ""}
    repo.release(widget(), schema_version=1)
    repo.write(POLICY, yaml.safe_dump({**declared(finalizers=[CLEANUP]),
                                       "declared-breaks": [stale]}))  # fmt: skip
    repo.commit()
    repo.write(POLICY, yaml.safe_dump(declared(finalizers=[CLEANUP_V2])))
    repo.release(widget(), schema_version=1)
    code, report = repo.verify()
    assert (code, codes(report)) == (1, {"UG721"}), report


def test_a_policy_outside_the_repository_is_the_same_on_both_sides(
    repo: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "policy.yaml"
    outside.write_text(yaml.safe_dump(declared(finalizers=[CLEANUP])))
    repo.release(widget(), schema_version=1)
    outside.write_text(yaml.safe_dump(declared(finalizers=[CLEANUP_V2])))
    repo.release(widget(), schema_version=1)
    code, report = repo.verify("--policy", str(outside))
    assert (code, codes(report)) == (0, set()), report
    assert report["history"]["notes"] == [
        f"{outside} lies outside the repository: its controllers are the same on both sides,"
        " so no change of them is seen"
    ]


def test_a_controller_of_a_crd_the_candidate_lacks_is_noted(repo: GitRepo) -> None:
    """A misspelt CRD name would turn the checks off for the CRD meant: the report says so,
    with the nearest name (a policy may serve other directories: a note, not a refusal)."""
    repo.write(POLICY, yaml.safe_dump({"controllers": [{"crd": "widget.example.com"}]}))
    repo.release(widget(), schema_version=1)
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["notes"] == [
        f"{POLICY}: controllers names widget.example.com, which is not among the candidate's"
        f" CRDs (did you mean '{NAME}'?); nothing of it is checked"
    ]
