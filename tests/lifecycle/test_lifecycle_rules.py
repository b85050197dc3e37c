"""Each lifecycle rule in a real git repository with dated release tags: every refused
history beside the nearest allowed one. Dates are commit dates set explicitly; the tags
are lightweight, so a release's date is its commit's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from lifecycle_kit import ReleaseRepo, found, served, versions

from crd_builders import spec_schema, version

Release = tuple[str, str, dict[str, Any]]  # tag, ISO date, the widgets CRD

JAN = "2024-01-15T12:00:00+00:00"
FEB = "2024-02-15T12:00:00+00:00"
MAR = "2024-03-15T12:00:00+00:00"
APR = "2024-04-15T12:00:00+00:00"
NEXT_YEAR = "2025-02-15T12:00:00+00:00"
LATER = "2025-03-15T12:00:00+00:00"

V1 = served("v1", storage=True)
V1_BETA = served("v1beta1", storage=True)


def narrowed(name: str, storage: bool = False, **extra: Any) -> dict[str, Any]:
    """The version with spec.size restricted to an enum: a break inside the version."""
    schema = spec_schema(size={"type": "string", "enum": ["S", "M"]})
    return version(name, schema, storage=storage, **extra)


def beta(**extra: Any) -> dict[str, Any]:
    return served("v1beta1", **extra)


def alpha(**extra: Any) -> dict[str, Any]:
    return served("v1alpha1", **extra)


NARROWED_STABLE = [("v0.1.0", JAN, versions(V1)), ("v0.2.0", FEB, versions(narrowed("v1", True)))]
NARROWED_ALPHA = [
    ("v0.1.0", JAN, versions(served("v1alpha1", storage=True))),
    ("v0.2.0", FEB, versions(narrowed("v1alpha1", True))),
]
# v1beta1 deprecated from v0.1.0, unserved 3 releases and 3 months later
BETA_UNSERVED_AFTER_3_MONTHS = [
    ("v0.1.0", JAN, versions(V1, beta(deprecated=True))),
    ("v0.2.0", FEB, versions(V1, beta(deprecated=True))),
    ("v0.3.0", MAR, versions(V1, beta(deprecated=True))),
    ("v0.4.0", APR, versions(V1, beta(deprecated=True, served=False))),
]
# the same, unserved 3 releases and 14 months later
BETA_UNSERVED_AFTER_14_MONTHS = [
    *BETA_UNSERVED_AFTER_3_MONTHS[:3],
    ("v0.4.0", LATER, versions(V1, beta(deprecated=True, served=False))),
]
# v1 served beside the storage version v1beta1 for one release, then storage
STORAGE_TO_V1 = [
    ("v0.1.0", JAN, versions(V1_BETA, served("v1"))),
    ("v0.2.0", FEB, versions(beta(), V1)),
]
# storage v1alpha1 -> v1 (too soon: UG805), v1alpha1 unserved, then removed
ALPHA_STORAGE_REMOVED = [
    ("v0.1.0", JAN, versions(alpha(storage=True))),
    ("v0.2.0", FEB, versions(alpha(), V1)),
    ("v0.3.0", MAR, versions(alpha(served=False), V1)),
    ("v0.4.0", APR, versions(V1)),
]
# v1alpha1 added beside v1 (never storage), unserved, then removed
ALPHA_ADDED_UNSERVED_REMOVED = [
    ("v0.1.0", JAN, versions(V1)),
    ("v0.2.0", FEB, versions(V1, alpha())),
    ("v0.3.0", MAR, versions(V1, alpha(served=False))),
    ("v0.4.0", APR, versions(V1)),
]


def declared(key: str, version: str, release: str) -> dict[str, Any]:
    """A lifecycle policy with one breaks or storage-migrations entry for widgets."""
    entry = {"crd": "widgets.example.com", "version": version, "release": release}
    return {key: [{**entry, "reason": "declared in the release notes"}]}


CASES: list[tuple[str, list[Release], dict[str, Any] | None, set[tuple[str, str, str]]]] = [
    # UG801 break-within-version
    (
        "UG801 refused: stable version narrowed",
        NARROWED_STABLE,
        None,
        {("UG801", "v1", "v0.2.0")},
    ),
    (
        "UG801 allowed: the narrowing in a new version",
        [
            ("v0.1.0", JAN, versions(V1)),
            ("v0.2.0", FEB, versions(V1, narrowed("v2"))),
        ],
        None,
        set(),
    ),
    (
        "UG801 refused: alpha version narrowed without a declared break",
        NARROWED_ALPHA,
        None,
        {("UG801", "v1alpha1", "v0.2.0")},
    ),
    (
        "UG801 allowed: alpha version narrowed with a break declared for that release",
        NARROWED_ALPHA,
        declared("breaks", "v1alpha1", "v0.2.0"),
        set(),
    ),
    (
        "UG801 refused: a declared break does not excuse a stable version",
        NARROWED_STABLE,
        declared("breaks", "v1", "v0.2.0"),
        {("UG801", "v1", "v0.2.0")},
    ),
    (
        "UG801 allowed: a tier whose policy allows breaks",
        NARROWED_STABLE,
        {"tiers": {"stable": {"breaking-changes": "allow"}}},
        set(),
    ),
    (
        "UG801 refused: v1 overridden to alpha still needs its break declared",
        NARROWED_STABLE,
        {
            "tiers": {"stable": {"breaking-changes": "allow"}},
            "tier-overrides": [{"crd": "widgets.example.com", "version": "v1", "tier": "alpha"}],
        },
        {("UG801", "v1", "v0.2.0")},
    ),
    # UG802 unserved-without-deprecation
    (
        "UG802 refused: beta removed without ever being deprecated",
        [
            ("v0.1.0", JAN, versions(V1, beta())),
            ("v0.2.0", NEXT_YEAR, versions(V1, beta(served=False))),
        ],
        None,
        {("UG802", "v1beta1", "v0.2.0")},
    ),
    (
        "UG802 allowed: alpha unserved without notice",
        [
            ("v0.1.0", JAN, versions(V1, alpha())),
            ("v0.2.0", FEB, versions(V1, alpha(served=False))),
        ],
        None,
        set(),
    ),
    # UG803 deprecation-window-short
    (
        "UG803 refused: beta unserved 2 releases and 2 months after its deprecation",
        [
            ("v0.1.0", JAN, versions(V1, beta(deprecated=True))),
            ("v0.2.0", FEB, versions(V1, beta(deprecated=True))),
            ("v0.3.0", MAR, versions(V1, beta(deprecated=True, served=False))),
        ],
        None,
        {("UG803", "v1beta1", "v0.3.0")},
    ),
    (
        "UG803 refused: 3 releases, but only 3 months of the 9",
        BETA_UNSERVED_AFTER_3_MONTHS,
        None,
        {("UG803", "v1beta1", "v0.4.0")},
    ),
    (
        "UG803 refused: 13 months, but only 1 release of the 3",
        [
            ("v0.1.0", JAN, versions(V1, beta(deprecated=True))),
            ("v0.2.0", LATER, versions(V1, beta(deprecated=True, served=False))),
        ],
        None,
        {("UG803", "v1beta1", "v0.2.0")},
    ),
    (
        "UG803 allowed: 3 releases and 14 months",
        BETA_UNSERVED_AFTER_14_MONTHS,
        None,
        set(),
    ),
    (
        "UG803 allowed: a policy's shorter window (3 releases, 3 months)",
        BETA_UNSERVED_AFTER_3_MONTHS,
        {"tiers": {"beta": {"deprecation": {"releases": 3, "months": 3}}}},
        set(),
    ),
    # UG804 replaced-by-less-stable
    (
        "UG804 refused: v1 unserved while only v2beta1 is served",
        [
            ("v0.1.0", JAN, versions(served("v1", deprecated=True), served("v2beta1", True))),
            ("v0.2.0", FEB, versions(served("v1", deprecated=True), served("v2beta1", True))),
            ("v0.3.0", MAR, versions(served("v1", deprecated=True), served("v2beta1", True))),
            (
                "v0.4.0",
                LATER,
                versions(served("v1", served=False, deprecated=True), served("v2beta1", True)),
            ),
        ],
        None,
        {("UG804", "v1", "v0.4.0")},
    ),
    (
        "UG804 allowed: v1beta1 unserved in favour of v1",
        BETA_UNSERVED_AFTER_14_MONTHS,
        None,
        set(),
    ),
    # UG805 storage-before-served
    (
        "UG805 refused: storage moves to v1 in the release that first serves it",
        [
            ("v0.1.0", JAN, versions(V1_BETA)),
            ("v0.2.0", FEB, versions(beta(), V1)),
        ],
        None,
        {("UG805", "v1", "v0.2.0")},
    ),
    (
        "UG805 allowed: v1 served beside v1beta1 one release before the switch",
        STORAGE_TO_V1,
        None,
        set(),
    ),
    (
        "UG805 refused: Grafana's window (6 months and a release) not yet passed",
        STORAGE_TO_V1,
        {"tiers": {"stable": {"served-before-storage": {"releases": 1, "months": 6}}}},
        {("UG805", "v1", "v0.2.0")},
    ),
    # UG806 removed-while-served (alpha: no deprecation window)
    (
        "UG806 refused: alpha removed while the release before served it",
        [
            ("v0.1.0", JAN, versions(V1)),
            ("v0.2.0", FEB, versions(V1, alpha())),
            ("v0.3.0", MAR, versions(V1)),
        ],
        None,
        {("UG806", "v1alpha1", "v0.3.0")},
    ),
    (
        "UG806 allowed: alpha unserved for a release, then removed",
        ALPHA_ADDED_UNSERVED_REMOVED,
        None,
        set(),
    ),
    # UG807 removed-without-migration
    (
        "UG807 refused: a former storage version removed without a declared migration",
        ALPHA_STORAGE_REMOVED,
        None,
        {("UG805", "v1", "v0.2.0"), ("UG807", "v1alpha1", "v0.4.0")},
    ),
    (
        "UG807 allowed: the storage migration declared for the removing release",
        ALPHA_STORAGE_REMOVED,
        declared("storage-migrations", "v1alpha1", "v0.4.0"),
        {("UG805", "v1", "v0.2.0")},
    ),
    (
        "UG807 allowed: a version added later and never storage",
        ALPHA_ADDED_UNSERVED_REMOVED,
        None,
        set(),
    ),
    # UG808 lifecycle-declaration-unused
    (
        "UG808 refused: a break declared for a release that breaks nothing",
        [
            ("v0.1.0", JAN, versions(alpha(storage=True))),
            ("v0.2.0", FEB, versions(alpha(storage=True))),
        ],
        declared("breaks", "v1alpha1", "v0.2.0"),
        {("UG808", "v1alpha1", "v0.2.0")},
    ),
    (
        "UG808 refused: a migration naming a tag that is no release",
        [("v0.1.0", JAN, versions(V1)), ("v0.2.0", FEB, versions(V1))],
        declared("storage-migrations", "v1", "v9"),
        {("UG808", "v1", "v9")},
    ),
]


@pytest.mark.parametrize(
    ("releases", "policy", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_lifecycle_rule(
    tmp_path: Path,
    releases: list[Release],
    policy: dict[str, Any] | None,
    expected: set[tuple[str, str, str]],
) -> None:
    repo = ReleaseRepo(tmp_path / "project")
    for tag, date, body in releases:
        repo.release(tag, date, body)
    code, report = repo.lifecycle("--releases", "v*", policy=policy)
    assert found(report) == expected
    assert code == (1 if expected else 0)


@pytest.mark.parametrize(
    ("rules", "expected_exit", "severities"),
    [
        pytest.param({"UG808": "warning"}, 0, ["warning"], id="UG808 warning: allowed"),
        pytest.param({"lifecycle-declaration-unused": "ignore"}, 0, [], id="ignored by name"),
        pytest.param({"UG801": "warning"}, 1, ["error"], id="another rule: refused"),
    ],
)
def test_policy_sets_the_severity_of_a_lifecycle_rule(
    tmp_path: Path, rules: dict[str, str], expected_exit: int, severities: list[str]
) -> None:
    repo = ReleaseRepo(tmp_path / "project")
    repo.release("v0.1.0", JAN, versions(V1))
    repo.release("v0.2.0", FEB, versions(V1))
    policy = tmp_path / "policy.yaml"
    lifecycle = declared("storage-migrations", "v1", "v9")
    policy.write_text(yaml.safe_dump({"rules": rules, "lifecycle": lifecycle}))
    code, report = repo.lifecycle("--releases", "v*", "--policy", str(policy))
    assert code == expected_exit, report
    assert [f["severity"] for f in report["findings"] if f["code"] == "UG808"] == severities
