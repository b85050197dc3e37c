"""The diff command as a user runs it: exit codes, one-line errors, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from crd_builders import crd, field_crd, spec_schema, version
from upgrade_guard.commands import options

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "chart-snippets" / "example-operator"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "upgrade_guard", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write(path: Path, *documents: object) -> str:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)


def test_example_is_refused_with_exit_1_and_excuses_the_declared_break() -> None:
    result = run(
        "diff",
        str(EXAMPLE / "crds" / "1.0.0"),
        str(EXAMPLE / "crds" / "2.0.0"),
        "--policy",
        str(EXAMPLE / "policy.yaml"),
        "--output",
        "json",
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "unsafe"
    excused = [f for f in report["findings"] if f["excused"]]
    assert [(f["code"], f["path"]) for f in excused] == [("UG201", "spec.legacyPath")]


def test_unchanged_crds_are_safe_with_exit_0() -> None:
    result = run("diff", str(EXAMPLE / "crds" / "2.0.0"), str(EXAMPLE / "crds" / "2.0.0"))
    assert result.returncode == 0, result.stderr
    assert "SAFE" in result.stdout


def test_new_side_can_come_from_standard_input_inside_a_helm_stream(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", field_crd({"type": "string"}))
    stream = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
            field_crd({"type": "string", "enum": ["a"]}),
        ]
    )
    result = run("diff", old, "-", "--output", "json", stdin="# Source: chart/crds.yaml\n" + stream)
    assert result.returncode == 1, result.stderr
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["UG207"]


def test_kube_version_turns_ratcheted_errors_into_warnings(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", field_crd({"type": "string"}))
    new = write(tmp_path / "new.yaml", field_crd({"type": "string", "enum": ["a"]}))
    assert run("diff", old, new, "--kube-version", "1.29").returncode == 1
    result = run("diff", old, new, "--kube-version", "v1.31.2", "--output", "json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["findings"][0]["severity"] == "warning"


def test_kube_version_refuses_a_crd_its_apiserver_refuses(tmp_path: Path) -> None:
    semver = {
        "type": "string",
        "maxLength": 64,
        "x-kubernetes-validations": [{"rule": "isSemver(self)"}],
    }
    old = write(tmp_path / "old.yaml", field_crd({"type": "string", "maxLength": 64}))
    new = write(tmp_path / "new.yaml", field_crd(semver))
    refused = run("diff", old, new, "--kube-version", "1.32")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith(
        f"upgrade-guard: error: {new} (document 1): CRD widgets.example.com version v1: the"
        " apiserver of Kubernetes 1.32 refuses this CRD: spec.field"
        " (x-kubernetes-validations[0].rule): Kubernetes 1.32 does not know isSemver: the"
        " semver library arrives in new CEL rules at 1.34"
    )
    assert "Traceback" not in refused.stderr
    assert run("diff", old, new, "--kube-version", "1.35").returncode == 0
    newer = run("diff", old, new, "--kube-version", "1.36")
    assert newer.returncode == 0
    assert "Kubernetes 1.36 is newer than the newest minor" in " ".join(newer.stdout.split())


WEBHOOK = {
    "strategy": "Webhook",
    "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "conversion", "namespace": "operator"}},
    },
}


@pytest.mark.parametrize(
    ("served", "exit_code"),
    [
        pytest.param(["v1"], 0, id="one version: safe"),
        pytest.param(["v1alpha1", "v1"], 1, id="two versions whose schemas differ: refused"),
    ],
)
def test_conversion_webhook_dropped_is_refused_only_where_schemas_differ(
    tmp_path: Path, served: list[str], exit_code: int
) -> None:
    """Webhook to None rewrites apiVersion only: harmless where objects meet one schema."""
    versions = [
        version(name, schema=spec_schema(**{name: {"type": "string"}}), storage=name == "v1")
        for name in served
    ]
    old = write(tmp_path / "old.yaml", crd(*versions, conversion=WEBHOOK))
    new = write(tmp_path / "new.yaml", crd(*versions, conversion={"strategy": "None"}))
    result = run("diff", old, new, "--output", "json")
    assert result.returncode == exit_code, result.stdout + result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["severity"]) for f in findings] == [
        ("UG108", "info" if exit_code == 0 else "error")
    ]


DEEP = "a:\n" + "".join("  " * i + "  b:\n" for i in range(300)) + "  " * 300 + "  c: 1\n"
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


def crd_text(**changes: object) -> str:
    body = crd()
    body.update(changes)
    return yaml.safe_dump(body)


def schema_text(schema: object) -> str:
    body = crd()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    return yaml.safe_dump(body)


BAD_INPUTS = [
    pytest.param("a: [1, 2\n", "line 2", id="malformed YAML: file and line"),
    pytest.param("- a\n- b\n", "must be a mapping, not a list", id="document not a mapping"),
    pytest.param("a: &a [*a]\n", "cycle", id="alias cycle"),
    pytest.param(BOMB, "aliases expand to more than", id="alias bomb"),
    pytest.param(DEEP, "nested deeper than", id="absurd nesting"),
    pytest.param(crd_text(apiVersion="apiextensions.k8s.io/v1beta1"), "v1beta1", id="v1beta1 CRD"),
    pytest.param(
        schema_text({"type": "object", "properties": {"spec": {"$ref": "#/x"}}}),
        "spec ($ref): Forbidden: $ref is not supported",
        id="$ref",
    ),
    pytest.param(
        schema_text({"type": "object", "properties": {"spec": {"properties": {}}}}),
        "spec (type): Required value: must not be empty for specified object fields",
        id="not structural",
    ),
    pytest.param(crd_text() + "---\n" + crd_text(), "defined twice", id="duplicate CRD"),
    pytest.param(
        crd_text(metadata={"name": "wrong.example.com"}),
        'must be spec.names.plural+"."+spec.group',
        id="name does not match plural.group",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    result = run("diff", str(bad), str(EXAMPLE / "crds" / "2.0.0"))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert str(bad) in result.stderr and message in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["diff", "/no/such/dir", "."], "no such file or directory", id="missing path"),
        pytest.param(["diff", "-", "-"], "only one of OLD and NEW", id="both on stdin"),
        pytest.param(
            ["diff", ".", ".", "--kube-version", "latest"], "--kube-version", id="bad version"
        ),
        pytest.param(
            ["diff", str(EXAMPLE / "crds"), str(EXAMPLE / "crds"), "--max-bytes", "100"],
            "larger than the limit",
            id="size limit",
        ),
        pytest.param(["diff", ".", ".", "--output", "xml"], "xml", id="unknown output"),
        pytest.param(["explain", "UG999"], "unknown rule", id="unknown rule"),
    ],
)
def test_bad_usage_is_exit_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_bad_policy_names_the_file_and_entry(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  UG207: fatal\n")
    crds = str(EXAMPLE / "crds" / "2.0.0")
    result = run("diff", crds, crds, "--policy", str(policy))
    assert result.returncode == 2
    assert f"{policy}: rules.UG207: must be one of" in result.stderr


def test_non_utf8_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"a: caf\xe9\n")
    result = run("diff", str(bad), str(bad))
    assert result.returncode == 2 and str(bad) in result.stderr, result.stderr


def test_input_files_are_not_modified(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", field_crd({"type": "string"}))
    before = Path(old).read_bytes()
    run("diff", old, old)
    assert Path(old).read_bytes() == before


def test_explain_prints_the_rule_documentation() -> None:
    result = run("explain", "enum-restricted")
    assert result.returncode == 0 and result.stdout.startswith("UG207 enum-restricted")


def stamped(body: dict[str, object], version: int) -> dict[str, object]:
    metadata = body["metadata"]
    assert isinstance(metadata, dict)
    metadata["annotations"] = {"upgrade-guard.io/crd-schema-version": str(version)}
    return body


@pytest.mark.parametrize(
    ("schema_version", "expected_exit", "codes"),
    [
        pytest.param(4, 0, ["UG207"], id="break for the release being applied: excused"),
        pytest.param(5, 1, ["UG207"], id="break for a later release: not used, not stale"),
        pytest.param(3, 1, ["UG207"], id="break for an earlier release: not used, not stale"),
        pytest.param(None, 0, ["UG207"], id="break without schema-version: always applies"),
    ],
)
def test_declared_breaks_are_scoped_by_the_stamped_schema_versions(
    tmp_path: Path, schema_version: int | None, expected_exit: int, codes: list[str]
) -> None:
    old = write(
        tmp_path / "old.yaml", stamped(field_crd({"type": "string", "enum": ["a", "b"]}), 3)
    )
    new = write(tmp_path / "new.yaml", stamped(field_crd({"type": "string", "enum": ["a"]}), 4))
    declared = {
        "crd": "widgets.example.com",
        "rule": "UG207",
        "path": "spec.field",
        "reason": "b was never accepted by the controller",
    }
    if schema_version is not None:
        declared["schema-version"] = schema_version
    policy = write(tmp_path / "policy.yaml", {"declared-breaks": [declared]})
    result = run("diff", old, new, "--policy", policy, "--output", "json")
    assert result.returncode == expected_exit, result.stderr
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == codes


def test_rules_and_explain_cover_the_history_checks() -> None:
    assert "UG704  error    schema-changed-without-bump" in run("rules").stdout
    explained = run("explain", "UG704")
    assert explained.returncode == 0 and explained.stdout.startswith("UG704 schema-changed")
    assert "Why it matters:" in explained.stdout and "UG705" not in explained.stdout


def test_github_output_also_writes_the_markdown_report_to_the_job_summary(
    tmp_path: Path,
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    old, new = (str(EXAMPLE / "crds" / version) for version in ("1.0.0", "2.0.0"))
    result = subprocess.run(
        [sys.executable, "-m", "upgrade_guard", "diff", old, new, "--output", "github"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 1, result.stderr
    markdown = run("diff", old, new, "--output", "markdown").stdout
    assert summary.read_text() == "earlier step\n" + markdown


def test_job_summary_is_cut_at_a_line_to_fit_github_limit(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    options.write_step_summary(summary, "| a row |\n" * 200_000)
    written = summary.read_bytes()
    assert len(written) <= options.STEP_SUMMARY_LIMIT
    assert written.endswith(b"--output json` has every finding._\n")
    assert b"| a row |\n\n_Report cut at 1 MiB" in written
