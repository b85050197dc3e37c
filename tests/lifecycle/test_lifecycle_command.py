"""verify-lifecycle as a user runs it: bad history exits 2 with one line, every output
format, explain and rules for its codes, the lifecycle policy section, the tiers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from lifecycle_kit import ReleaseRepo, served, versions

from crd_builders import COMPILING_RULE, NOT_COMPILING_RULE, spec_schema, version
from upgrade_guard import rules
from upgrade_guard.lifecycle.settings import Tier
from upgrade_guard.lifecycle.timeline import tier_from_name
from upgrade_guard.load.release_tags import version_order
from upgrade_guard.policy import PolicyError, parse_policy
from upgrade_guard.rules.kinds import LifecycleRule

JAN = "2024-01-15T12:00:00+00:00"
FEB = "2024-02-15T12:00:00+00:00"
DOCS = Path(__file__).resolve().parents[2] / "docs/lifecycle.md"


@pytest.fixture
def repo(tmp_path: Path) -> ReleaseRepo:
    return ReleaseRepo(tmp_path / "project")


def refused_repo(repo: ReleaseRepo) -> ReleaseRepo:
    """v1beta1 unserved without a deprecation between v0.1.0 and v0.2.0."""
    repo.release("v0.1.0", JAN, versions(served("v1", storage=True), served("v1beta1")))
    repo.release("v0.2.0", FEB, versions(served("v1", storage=True)))
    return repo


@pytest.mark.parametrize(
    ("name", "tier"),
    [
        ("v1", Tier.STABLE),
        ("v12", Tier.STABLE),
        ("v2beta3", Tier.BETA),
        ("v1alpha1", Tier.ALPHA),
        ("v1-preview", Tier.ALPHA),  # not a Kubernetes version name: lowest priority
        ("v0", Tier.ALPHA),
        ("v1beta0", Tier.ALPHA),
    ],
)
def test_tier_from_the_version_name(name: str, tier: Tier) -> None:
    assert tier_from_name(name) is tier


def test_releases_are_ordered_by_version_not_by_name() -> None:
    tags = ["v1.10.0", "v1.2.0", "v1.2.0-rc.1", "v1.2.0.1", "v1.2.1", "v1.2.0-rc.10"]
    ordered = sorted(tags, key=version_order)
    assert ordered == ["v1.2.0-rc.1", "v1.2.0-rc.10", "v1.2.0", "v1.2.0.1", "v1.2.1", "v1.10.0"]


@pytest.mark.parametrize("output", ["text", "json", "markdown", "github"])
def test_every_output_format_names_the_rule_tags_and_dates(repo: ReleaseRepo, output: str) -> None:
    refused_repo(repo)
    done = repo.ug("verify-lifecycle", "crds", "--output", output)
    assert done.returncode == 1, done.stdout + done.stderr
    for word in ("UG802", "v1beta1", "v0.2.0 (2024-02-15)", "v0.1.0 (2024-01-15)"):
        assert word in done.stdout, (word, done.stdout)
    if output == "json":
        finding = json.loads(done.stdout)["findings"][0]
        assert finding["new"] == {"tag": "v0.2.0", "date": "2024-02-15T12:00:00+00:00"}


def test_a_clean_history_is_safe(repo: ReleaseRepo) -> None:
    repo.release("v0.1.0", JAN, versions(served("v1", storage=True)))
    repo.release("v0.2.0", FEB, versions(served("v1", storage=True), served("v2")))
    done = repo.ug("verify-lifecycle", "crds", "--releases", "v0.*")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SAFE" in done.stdout


@pytest.mark.parametrize(
    ("working_tree", "expected_exit"),
    [
        ("v1beta1 unserved without a deprecation", 1),
        ("unchanged", 0),
    ],
)
def test_next_judges_the_working_tree_as_the_release_to_come(
    repo: ReleaseRepo, working_tree: str, expected_exit: int
) -> None:
    repo.release("v0.1.0", JAN, versions(served("v1", storage=True), served("v1beta1")))
    if working_tree != "unchanged":
        repo.write_crd(versions(served("v1", storage=True), served("v1beta1", served=False)))
    done = repo.ug("verify-lifecycle", "crds", "--next", "v0.2.0", "--output", "json")
    assert done.returncode == expected_exit, done.stdout + done.stderr
    found = {(f["code"], f["new"]["tag"]) for f in json.loads(done.stdout)["findings"]}
    assert found == ({("UG802", "v0.2.0")} if expected_exit else set())


# A release tag is history: the apiserver that took it compiled its rules then (and may have
# been older than this one), so only the release to come has its rules compiled and costed.
RULES_COMPILED = {
    "not compiling in a release": (NOT_COMPILING_RULE, COMPILING_RULE, False),
    "not compiling in the release to come": (COMPILING_RULE, NOT_COMPILING_RULE, True),
}


@pytest.mark.parametrize(
    ("released", "to_come", "refused"), RULES_COMPILED.values(), ids=RULES_COMPILED.keys()
)
def test_only_the_release_to_come_has_its_rules_compiled(
    repo: ReleaseRepo, released: dict[str, Any], to_come: dict[str, Any], refused: bool
) -> None:
    repo.release("v0.1.0", JAN, versions(version("v1", spec_schema(size=released))))
    repo.write_crd(versions(version("v1", spec_schema(size=to_come))))
    done = repo.ug("verify-lifecycle", "crds", "--next", "v0.2.0")
    assert (done.returncode == 2) is refused, done.stdout + done.stderr
    if refused:
        assert "crds/widgets.example.com.yaml (document 1): CRD widgets.example.com" in done.stderr
        assert "compilation failed" in done.stderr, done.stderr


def test_next_may_be_the_first_release_but_not_an_existing_one(repo: ReleaseRepo) -> None:
    repo.write_crd(versions(served("v1", storage=True)))
    assert repo.ug("verify-lifecycle", "crds", "--next", "v0.1.0").returncode == 0
    repo.release("v0.1.0", JAN, versions(served("v1", storage=True)))
    done = repo.ug("verify-lifecycle", "crds", "--next", "v0.1.0")
    assert done.returncode == 2 and "already a release tag" in done.stderr


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("none", ["--releases", "v*"], "no tag in"),
        ("empty-tag", ["--releases", "v*"], "tag v0.2.0: no CustomResourceDefinitions under crds"),
        ("odd-tag", ["--releases", "*"], "tag latest: not a version"),
        ("broken-yaml", ["--releases", "v*"], "v0.2.0:crds/"),
    ],
)
def test_bad_history_is_one_line_and_exit_2(
    repo: ReleaseRepo, setup: str, args: list[str], message: str
) -> None:
    repo.release("v0.1.0", JAN, versions(served("v1", storage=True)))
    if setup == "none":
        repo.git("tag", "-d", "v0.1.0")
    elif setup == "empty-tag":
        (repo.root / "crds").rename(repo.root / "elsewhere")
        repo.commit_dated(FEB, "moved")
        repo.git("tag", "v0.2.0")
    elif setup == "odd-tag":
        repo.git("tag", "latest")
    elif setup == "broken-yaml":
        repo.write("crds/broken.yaml", "kind: [unclosed\n")
        repo.commit_dated(FEB, "broken")
        repo.git("tag", "v0.2.0")
    repo.write("crds/.keep", "")  # DIR must exist in the work tree
    done = repo.ug("verify-lifecycle", "crds", *args, process=True)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_policy_errors_name_the_entry() -> None:
    with pytest.raises(PolicyError, match=r"p.yaml: lifecycle.tiers.beta.deprecation.months"):
        parse_policy({"lifecycle": {"tiers": {"beta": {"deprecation": {"months": -1}}}}}, "p.yaml")
    with pytest.raises(PolicyError, match=r"tiers: unknown key 'gamma' \(expected alpha, beta, "):
        parse_policy({"lifecycle": {"tiers": {"gamma": {}}}}, "p.yaml")
    with pytest.raises(PolicyError, match=r"lifecycle.breaks\[0\]: release is required"):
        parse_policy({"lifecycle": {"breaks": [{"crd": "a", "version": "v1", "reason": "r"}]}}, "p")
    with pytest.raises(PolicyError, match=r"lifecycle: unknown key 'windows'"):
        parse_policy({"lifecycle": {"windows": {}}}, "p.yaml")


def test_a_tier_setting_overrides_only_what_it_names() -> None:
    policy = parse_policy({"lifecycle": {"tiers": {"beta": {"deprecation": {"months": 2}}}}}, "p")
    beta = policy.lifecycle.tiers[Tier.BETA]
    assert (beta.deprecation.releases, beta.deprecation.months) == (0, 2)
    assert str(beta.breaking_changes) == "refuse"
    assert policy.lifecycle.tiers[Tier.STABLE].deprecation.months == 12


def test_every_lifecycle_rule_is_registered_documented_listed_and_explained(
    repo: ReleaseRepo,
) -> None:
    registered = [rule for rule in rules.ALL_RULES if isinstance(rule, LifecycleRule)]
    assert len(registered) == 8
    assert all(
        rule.check.__module__ == f"upgrade_guard.rules.{rule.name}".replace("-", "_")
        for rule in registered
    )
    tests = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    listing = repo.ug("rules").stdout
    docs = DOCS.read_text()
    for rule in registered:
        assert re.fullmatch(r"UG8\d\d", rule.code) and rule.doc.startswith(
            f"{rule.code} {rule.name}\n"
        )
        for heading in ("What it flags:", "Why it matters:", "Allowed:"):
            assert heading in rule.doc, (rule.code, heading)
        assert f'"{rule.code} ' in tests, f"no test case names {rule.code}"
        assert rule.code in listing
        assert f"| {rule.code} | {rule.name} |" in docs
        explained = repo.ug("explain", rule.name)
        assert explained.returncode == 0 and explained.stdout.startswith(rule.code)


def test_every_policy_example_in_the_lifecycle_page_parses() -> None:
    examples = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    assert len(examples) == 4  # the section's own, Kubernetes', ADR 14's, Grafana's
    for example in examples:
        policy = parse_policy(yaml.safe_load(example), "docs/lifecycle.md")
        assert policy.lifecycle.tiers[Tier.STABLE].deprecation.releases >= 2
