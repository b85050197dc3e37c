"""verify-history in real git repositories: baselines, version rules, breaks, restarts, counters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from history_kit import GitRepo, codes, gadget, refusals, widget

from crd_builders import COMPILING_RULE, NOT_COMPILING_RULE

STRING = {"type": "string"}
SIZE_AND_COLOR = {"size": STRING, "color": STRING}


def digests_of(repo: GitRepo) -> dict[str, str]:
    found = {}
    for path in sorted((repo.root / "crds").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        found[body["metadata"]["name"]] = body["metadata"]["annotations"][
            "upgrade-guard.io/crd-schema-digest"
        ]
    return found


# ------------------------------------------------------------------ which baseline


def test_explicit_baseline_compares_the_working_tree_with_the_ref(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1, tag="v1.0.0")
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2)
    repo.write_crd(widget(**SIZE_AND_COLOR, shape=STRING))
    repo.stamp(3)
    code, report = repo.verify("--baseline-ref", "v1.0.0")
    assert code == 0, report
    assert report["history"]["baseline"] == "v1.0.0"
    assert report["history"]["candidate"] == "working tree"
    assert report["history"]["source"].startswith("explicit")
    assert (
        report["history"]["schema"]["baseline_version"],
        report["history"]["schema"]["candidate_version"],
    ) == (1, 3)


def test_dirty_tree_is_compared_with_head_and_says_so(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.stamp(2)
    done = repo.ug("verify-history", "crds")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("baseline:  HEAD — ")
    words = " ".join(done.stdout.split())
    assert "uncommitted changes, so the working tree against HEAD" in words
    assert "schema: version 1 → 2; changed: " in words
    assert done.stdout.strip().splitlines()[-1].startswith("upgrade-guard SAFE")


def test_clean_tree_is_head_against_its_parent_and_says_so(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2)
    code, report = repo.verify()
    assert code == 0, report
    assert (report["history"]["baseline"], report["history"]["candidate"]) == ("HEAD^", "HEAD")
    assert "is clean, so HEAD against HEAD^" in report["history"]["source"]
    # A change elsewhere in the repository does not make crds/ dirty.
    repo.write("README.md", "hello\n")
    code, report = repo.verify()
    assert report["history"]["baseline"] == "HEAD^"


def test_clean_tree_judges_the_last_commit_not_the_one_before(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.commit("forgot to bump")  # stamped 1, digest stale, schema changed
    code, report = repo.verify()
    assert code == 1
    assert {"UG703", "UG704"} <= codes(report)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_explicit_baseline_can_be_required(repo: GitRepo, how: str) -> None:
    repo.release(widget(), schema_version=1)
    if how == "flag":
        done = repo.ug("verify-history", "crds", "--require-explicit-baseline", process=True)
    else:
        done = repo.ug(
            "verify-history",
            "crds",
            env={"UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE": "1"},
            process=True,
        )
    assert done.returncode == 2
    assert "--baseline-ref" in done.stderr
    assert "Traceback" not in done.stderr
    allowed = repo.ug(
        "verify-history",
        "crds",
        "--baseline-ref",
        "HEAD",
        env={"UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE": "1"},
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


def test_baseline_ref_from_the_environment(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1, tag="base")
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2)
    code, report = repo.verify(env={"UPGRADE_GUARD_BASELINE_REF": "base"})
    assert code == 0 and report["history"]["baseline"] == "base"


def test_an_unknown_ref_is_bad_input_naming_it(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    done = repo.ug("verify-history", "crds", "--baseline-ref", "no-such-tag")
    assert done.returncode == 2
    assert "no-such-tag" in done.stderr and "Traceback" not in done.stderr


def test_outside_a_git_repository_is_bad_input(tmp_path: Path) -> None:
    plain = GitRepo(tmp_path / "plain", init=False)
    plain.write_crd(widget())
    done = plain.ug("verify-history", "crds", "--baseline-ref", "HEAD", process=True)
    assert done.returncode == 2
    assert "git" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------ first adoption


def test_bootstrap_from_an_empty_baseline_starts_at_one(repo: GitRepo) -> None:
    repo.write("README.md", "no CRDs yet\n")
    repo.commit("empty")
    repo.release(widget(), schema_version=1)
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["schema"]["first_adoption"] is True
    assert report["history"]["schema"]["changes"] == ["widgets.example.com added"]


def test_bootstrap_from_an_empty_baseline_refuses_another_start(repo: GitRepo) -> None:
    repo.write("README.md", "no CRDs yet\n")
    repo.commit("empty")
    repo.release(widget(), schema_version=2)
    code, report = repo.verify()
    assert code == 1
    assert codes(report) == {"UG707"}


def test_bootstrap_of_a_first_commit_has_an_empty_baseline(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    code, report = repo.verify()
    assert code == 0, report
    assert "no parent" in report["history"]["source"]


def test_bootstrap_from_unannotated_crds_starts_at_one(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=None)
    repo.stamp(1)
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["schema"]["first_adoption"] is True
    assert report["history"]["schema"]["changed"] is False


def test_bootstrap_from_unannotated_crds_refuses_another_start(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=None)
    repo.stamp(5)
    code, report = repo.verify()
    assert code == 1
    assert codes(report) == {"UG707"}


def test_bootstrap_still_runs_the_engine(repo: GitRepo) -> None:
    repo.release(widget(**SIZE_AND_COLOR), schema_version=None)
    repo.write_crd(widget())
    repo.stamp(1)
    code, report = repo.verify()
    assert code == 1
    assert ("UG201", "widgets.example.com") in refusals(report)


# ------------------------------------------------------------------ version rules


def test_change_with_bump_passes(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.stamp(2)
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["schema"]["changes"] == ["widgets.example.com changed"]


def test_change_without_bump_is_refused(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.stamp(1)
    code, report = repo.verify()
    assert code == 1
    assert codes(report) == {"UG704"}


@pytest.mark.parametrize(
    ("rules", "profile", "expected_exit", "severities"),
    [
        pytest.param({"UG704": "warning"}, "default", 0, ["warning"], id="UG704 warning: allowed"),
        pytest.param(
            {"schema-changed-without-bump": "ignore"}, "default", 0, [], id="ignored by name"
        ),
        pytest.param({"UG704": "warning"}, "strict", 1, ["error"], id="warning under strict"),
        pytest.param({"UG705": "warning"}, "default", 1, ["error"], id="another check: refused"),
    ],
)
def test_policy_sets_the_severity_of_a_history_check(
    repo: GitRepo, rules: dict[str, str], profile: str, expected_exit: int, severities: list[str]
) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.stamp(1)
    repo.write("policy.yaml", json.dumps({"profile": profile, "rules": rules}))
    code, report = repo.verify("--policy", "policy.yaml")
    assert code == expected_exit, report
    found = [f["severity"] for f in report["findings"] if f["code"] == "UG704"]
    assert found == severities


def test_bump_without_change_is_refused(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.stamp(2)
    code, report = repo.verify()
    assert code == 1
    assert codes(report) == {"UG705"}


def test_description_edits_and_reformatting_need_no_bump(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    body = widget(size={"type": "string", "description": "how big"})
    path = repo.root / "crds" / "widgets.example.com.yaml"
    stamped = yaml.safe_load(path.read_text())["metadata"]
    body["metadata"] = stamped
    path.write_text(json.dumps(body, indent=4))  # JSON is YAML, and reformatted
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["schema"]["changed"] is False


def test_versions_must_agree_across_crds(repo: GitRepo) -> None:
    repo.release(widget(), gadget(), schema_version=1)
    path = repo.root / "crds" / "gadgets.example.com.yaml"
    path.write_text(path.read_text().replace('crd-schema-version: "1"', 'crd-schema-version: "2"'))
    code, report = repo.verify()
    assert code == 1
    assert "UG702" in codes(report)


@pytest.mark.parametrize("value", ["01", "0", "+1", "1.0", "one"])
def test_non_canonical_versions_are_refused(repo: GitRepo, value: str) -> None:
    repo.release(widget(), schema_version=1)
    path = repo.root / "crds" / "widgets.example.com.yaml"
    path.write_text(
        path.read_text().replace('crd-schema-version: "1"', f"crd-schema-version: '{value}'")
    )
    code, report = repo.verify()
    assert code == 1
    assert "UG701" in codes(report)


def test_a_stale_digest_is_refused(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(size={"type": "string", "maxLength": 3}))  # annotations kept
    code, report = repo.verify()
    assert code == 1
    assert {"UG703", "UG704"} <= codes(report)


def test_rollback_is_refused(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2)
    repo.write_crd(widget())
    repo.stamp(1)
    code, report = repo.verify()
    assert code == 1
    assert "UG706" in codes(report)


def _restart_policy(repo: GitRepo, version: int, digests: dict[str, str]) -> str:
    policy = {
        "restarts": [
            {"schema-version": version, "digests": digests, "reason": "2 was never released"}
        ]
    }
    repo.write("policy.yaml", yaml.safe_dump(policy))
    return "policy.yaml"


def test_restart_admits_the_rollback_of_the_tree_it_records(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2, tag="abandoned")
    recorded = digests_of(repo)
    repo.write_crd(widget())
    repo.stamp(1)
    policy = _restart_policy(repo, 2, recorded)
    code, report = repo.verify("--baseline-ref", "abandoned", "--policy", policy)
    assert code == 0, report
    assert report["history"]["schema"]["restart"] == "2 was never released"
    # The engine's findings (color removed) are excused by the restart, not hidden.
    excused = [f for f in report["findings"] if f["excused"]]
    assert [f["code"] for f in excused] == ["UG201"]


def test_restart_is_refused_for_another_tree(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2, tag="recorded")
    recorded = digests_of(repo)
    repo.release(widget(**SIZE_AND_COLOR, shape=STRING), schema_version=2, tag="other")
    repo.write_crd(widget())
    repo.stamp(1)
    policy = _restart_policy(repo, 2, recorded)
    code, report = repo.verify("--baseline-ref", "other", "--policy", policy)
    assert code == 1
    assert "UG706" in codes(report)
    message = next(f["message"] for f in report["findings"] if f["code"] == "UG706")
    assert "another tree" in message and "widgets.example.com" in message


def test_restart_for_another_version_does_not_apply(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.release(widget(**SIZE_AND_COLOR), schema_version=2)
    recorded = digests_of(repo)
    repo.write_crd(widget())
    repo.stamp(1)
    policy = _restart_policy(repo, 3, recorded)
    code, report = repo.verify("--policy", policy)
    assert code == 1 and "UG706" in codes(report)


# ------------------------------------------------------------------ CRDs added and removed


def test_a_crd_added_is_allowed_with_a_bump(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(gadget())
    repo.stamp(2)
    code, report = repo.verify()
    assert code == 0, report
    assert report["history"]["schema"]["changes"] == ["gadgets.example.com added"]


def test_a_crd_removed_is_refused_unless_declared(repo: GitRepo) -> None:
    repo.release(widget(), gadget(), schema_version=1)
    repo.remove("crds/gadgets.example.com.yaml")
    repo.stamp(2)
    code, report = repo.verify()
    assert code == 1
    assert refusals(report) == {("UG101", "gadgets.example.com")}
    declared = {
        "declared-breaks": [
            {
                "crd": "gadgets.example.com",
                "rule": "crd-removed",
                "schema-version": 2,
                "reason": "gadgets were never used",
            }
        ]
    }
    repo.write("policy.yaml", yaml.safe_dump(declared))
    code, report = repo.verify("--policy", "policy.yaml")
    assert code == 0, report


# ------------------------------------------------------------------ declared breaks


def _break(schema_version: int | None, path: str = "spec.color") -> str:
    entry: dict[str, object] = {
        "crd": "widgets.example.com",
        "rule": "UG201",
        "path": path,
        "version": "v1",
        "reason": "color was never read",
    }
    if schema_version is not None:
        entry["schema-version"] = schema_version
    return yaml.safe_dump({"declared-breaks": [entry]})


def _remove_color(repo: GitRepo, policy: str) -> tuple[int, dict[str, object]]:
    repo.release(widget(**SIZE_AND_COLOR), schema_version=1)
    repo.write_crd(widget())
    repo.stamp(2)
    repo.write("policy.yaml", policy)
    return repo.verify("--policy", "policy.yaml")


def test_engine_findings_are_refused_without_a_declared_break(repo: GitRepo) -> None:
    repo.release(widget(**SIZE_AND_COLOR), schema_version=1)
    repo.write_crd(widget())
    repo.stamp(2)
    code, report = repo.verify()
    assert code == 1
    assert refusals(report) == {("UG201", "widgets.example.com")}


def test_a_declared_break_for_this_schema_version_excuses(repo: GitRepo) -> None:
    code, report = _remove_color(repo, _break(2))
    assert code == 0, report
    assert [f["reason"] for f in report["findings"] if f["excused"]] == ["color was never read"]


@pytest.mark.parametrize("other", [1, 3])
def test_a_declared_break_for_another_schema_version_excuses_nothing(
    repo: GitRepo, other: int
) -> None:
    code, report = _remove_color(repo, _break(other))
    assert code == 1
    assert refusals(report) == {("UG201", "widgets.example.com")}


def test_a_declared_break_without_schema_version_is_not_used(repo: GitRepo) -> None:
    code, report = _remove_color(repo, _break(None))
    assert code == 1
    assert refusals(report) == {("UG201", "widgets.example.com")}
    assert any("without schema-version" in note for note in report["history"]["notes"])


def test_a_stale_declared_break_is_refused(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(**SIZE_AND_COLOR))  # additive: no finding to excuse
    repo.stamp(2)
    repo.write("policy.yaml", _break(2))
    code, report = repo.verify("--policy", "policy.yaml")
    assert code == 1
    assert refusals(report) == {("UG902", "widgets.example.com")}


def test_a_break_from_an_earlier_release_is_history_not_stale(repo: GitRepo) -> None:
    repo.release(widget(**SIZE_AND_COLOR), schema_version=1)
    repo.write("policy.yaml", _break(2))
    repo.release(widget(), schema_version=2)
    repo.release(widget(shape=STRING, size=STRING), schema_version=3)
    code, report = repo.verify("--policy", "policy.yaml")
    assert code == 0, report


# ------------------------------------------------------------------ other counters


def _counters(repo: GitRepo, *counters: dict[str, object]) -> str:
    repo.write("policy.yaml", yaml.safe_dump({"counters": list(counters)}))
    return "policy.yaml"


def test_controller_state_version_is_monotonic_by_default(repo: GitRepo) -> None:
    repo.write_crd(widget())
    repo.stamp(1, "--counter", "controller-state-version=4")
    repo.commit()
    repo.stamp(None, "--counter", "controller-state-version=3")
    code, report = repo.verify()
    assert code == 1
    assert codes(report) == {"UG709"}
    repo.stamp(None, "--counter", "controller-state-version=4")
    code, report = repo.verify("--baseline-ref", "HEAD")
    assert code == 0, report
    assert report["history"]["counters"] == [
        {
            "name": "controller-state-version",
            "rule": "monotonic",
            "baseline": 4,
            "candidate": 4,
            "files_changed": None,
        }
    ]


def test_a_declared_counter_must_be_stamped(repo: GitRepo) -> None:
    policy = _counters(repo, {"name": "controller-state-version", "rule": "monotonic"})
    repo.release(widget(), schema_version=1)
    code, report = repo.verify("--policy", policy)
    assert code == 1
    assert codes(report) == {"UG708"}


def _admission(repo: GitRepo) -> str:
    return _counters(
        repo,
        {"name": "admission", "rule": "equal-when-unchanged", "files": ["webhooks/**"]},
    )


def test_equal_when_unchanged_must_rise_with_its_files(repo: GitRepo) -> None:
    policy = _admission(repo)
    repo.write("webhooks/config.yaml", "rules: [a]\n")
    repo.write_crd(widget())
    repo.stamp(1, "--counter", "admission=1", "--policy", policy)
    repo.commit()
    repo.write("webhooks/config.yaml", "rules: [a, b]\n")
    code, report = repo.verify("--policy", policy)
    assert code == 1
    assert codes(report) == {"UG710"}
    repo.stamp(None, "--counter", "admission=2", "--policy", policy)
    code, report = repo.verify("--policy", policy)
    assert code == 0, report
    assert report["history"]["counters"][0]["files_changed"] is True


def test_equal_when_unchanged_must_stay_without_changes(repo: GitRepo) -> None:
    policy = _admission(repo)
    repo.write("webhooks/config.yaml", "rules: [a]\n")
    repo.write_crd(widget())
    repo.stamp(1, "--counter", "admission=1", "--policy", policy)
    repo.commit()
    repo.stamp(None, "--counter", "admission=2", "--policy", policy)
    code, report = repo.verify("--policy", policy)
    assert code == 1
    assert codes(report) == {"UG711"}


def test_a_custom_annotation_prefix_is_used_everywhere(repo: GitRepo) -> None:
    repo.write("policy.yaml", "annotation-prefix: example.com/\n")
    repo.write_crd(widget())
    repo.stamp(1, "--policy", "policy.yaml")
    text = (repo.root / "crds" / "widgets.example.com.yaml").read_text()
    assert 'example.com/crd-schema-version: "1"' in text
    assert "upgrade-guard.io" not in text
    repo.commit()
    code, report = repo.verify("--policy", "policy.yaml")
    assert code == 0, report


# ------------------------------------------------------------------ reports


def test_failure_lists_every_reason_and_github_annotates(repo: GitRepo) -> None:
    repo.release(widget(**SIZE_AND_COLOR), schema_version=1)
    repo.write_crd(widget())
    repo.stamp(1)
    text = repo.ug("verify-history", "crds", process=True)
    assert text.returncode == 1
    assert "UG201" in text.stdout and "UG704" in text.stdout
    assert "UNSAFE — 1 CRD; 2 error" in text.stdout.splitlines()[-1]
    github = repo.ug("verify-history", "crds", "--output", "github")
    assert github.returncode == 1
    errors = [line for line in github.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 2
    markdown = repo.ug("verify-history", "crds", "--output", "markdown")
    assert "| ❌ error | `UG704` schema-changed-without-bump |" in markdown.stdout


# ------------------------------------------------------------------ the README's adoption


def test_adoption_in_two_commands_then_ci(repo: GitRepo) -> None:
    """README: `stamp DIR --schema-version 1`, `verify-history DIR`; then the CI step."""
    repo.release(widget(), gadget(), schema_version=None, tag="before-adoption")
    assert repo.ug("stamp", "crds", "--schema-version", "1", process=True).returncode == 0
    done = repo.ug("verify-history", "crds", process=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "schema:    version none → 1 (first adoption)" in done.stdout
    repo.commit("adopt upgrade-guard counters")
    main = repo.git("rev-parse", "HEAD")
    # A pull request that changes a spec and forgets the bump: the CI step refuses it.
    repo.write_crd(widget(**SIZE_AND_COLOR))
    repo.stamp()
    repo.commit("add color")
    ci = {"UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE": "true"}
    check = repo.ug("stamp", "--check", "crds", env=ci, process=True)
    assert check.returncode == 0
    done = repo.ug(
        "verify-history", "crds", "--baseline-ref", main, "--output", "github", env=ci, process=True
    )
    assert done.returncode == 1
    assert done.stdout.startswith("::error title=UG704 schema-changed-without-bump::")


# ------------------------------------------------------------------ the CRDs' own validity

# A released tree is history: the apiserver that took it compiled its rules then (and may
# have been older than this one), so only the candidate's rules are compiled and costed.
RULES_COMPILED = {
    "not compiling in the baseline": (NOT_COMPILING_RULE, COMPILING_RULE, False),
    "not compiling in the candidate": (COMPILING_RULE, NOT_COMPILING_RULE, True),
}


@pytest.mark.parametrize(
    ("baseline", "candidate", "refused"), RULES_COMPILED.values(), ids=RULES_COMPILED.keys()
)
def test_only_the_candidates_rules_are_compiled(
    repo: GitRepo, baseline: dict[str, Any], candidate: dict[str, Any], refused: bool
) -> None:
    repo.release(widget(size=baseline), schema_version=None)
    repo.write_crd(widget(size=candidate))
    done = repo.ug("verify-history", "crds")
    assert (done.returncode == 2) is refused, done.stdout + done.stderr
    if refused:
        assert (
            "crds/widgets.example.com.yaml (document 1): CRD widgets.example.com version v1:"
            " the apiserver refuses" in done.stderr
        )
        assert "compilation failed" in done.stderr, done.stderr
