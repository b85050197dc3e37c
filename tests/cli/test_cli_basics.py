"""What a new user meets first: --version, -h, readable help, rules for tooling, and a diff
pointed at the wrong folder."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from crd_builders import field_crd
from upgrade_guard import cli
from upgrade_guard.policy import parse_policy


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "upgrade_guard", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"},
    )


def test_version_prints_the_installed_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout == f"upgrade-guard {metadata.version('upgrade-guard')}\n"


COMMANDS = list(cli.COMMANDS)


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)], ids=str)
def test_help_is_short_flag_and_fits_80_columns_uncut(command: list[str]) -> None:
    short, long = run(*command, "-h"), run(*command, "--help")
    assert short.returncode == 0 and short.stdout == long.stdout
    lines = short.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), short.stdout
    assert "…" not in short.stdout and "<bool>" not in short.stdout
    assert not any(line.endswith("...") for line in lines[1:]), short.stdout  # cut summaries


def test_help_names_every_flag_whole() -> None:
    help_text = run("verify-history", "-h").stdout
    assert "--require-explicit-baseline" in help_text
    assert "UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE" in help_text


def test_rules_as_json_lists_engine_rules_and_history_checks() -> None:
    result = run("rules", "--output", "json")
    assert result.returncode == 0
    rules = json.loads(result.stdout)["rules"]
    by_code = {rule["code"]: rule for rule in rules}
    assert by_code["UG207"] == {
        "code": "UG207",
        "name": "enum-restricted",
        "severity": "error",
        "command": "diff",
        "summary": by_code["UG207"]["summary"],
    }
    assert by_code["UG704"]["command"] == "verify-history"
    text_codes = [line.split()[0] for line in run("rules").stdout.splitlines()]
    assert text_codes == [rule["code"] for rule in rules]


def _write(path: Path, *documents: object) -> str:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}


@pytest.mark.parametrize("side", ["old", "new", "both"])
def test_diff_refuses_a_side_without_crds_as_bad_input(tmp_path: Path, side: str) -> None:
    crds = _write(tmp_path / "crds.yaml", field_crd({"type": "string"}))
    other = _write(tmp_path / "deployment.yaml", DEPLOYMENT)
    old = other if side in ("old", "both") else crds
    new = other if side in ("new", "both") else crds
    result = run("diff", old, new)
    assert result.returncode == 2, result.stdout
    assert result.stderr.count("\n") == 1
    assert "deployment.yaml: no CustomResourceDefinitions" in result.stderr
    assert "--allow-no-crds" in result.stderr


def test_diff_accepts_a_first_release_when_asked(tmp_path: Path) -> None:
    crds = _write(tmp_path / "crds.yaml", field_crd({"type": "string"}))
    empty = _write(tmp_path / "deployment.yaml", DEPLOYMENT)
    result = run("diff", empty, crds, "--allow-no-crds")
    assert result.returncode == 0, result.stderr
    assert "SAFE" in result.stdout


def test_explain_has_a_page_on_declaring_breaks_whose_examples_are_valid_policy() -> None:
    result = run("explain", "declared-breaks")
    assert result.returncode == 0
    assert "--declare-breaks" in result.stdout and "schema-version" in result.stdout
    examples = [
        textwrap.dedent(block)
        for block in result.stdout.split("\n\n")
        if block.startswith("  ") and "reason:" in block
    ]
    assert len(examples) == 2
    for example in examples:
        if not example.startswith("declared-breaks:"):
            example = "declared-breaks:\n" + example
        policy = parse_policy(yaml.safe_load(example), "explain")
        assert policy.declared_breaks


def test_explain_names_the_topics_for_an_unknown_word() -> None:
    result = run("explain", "breaks")
    assert result.returncode == 2
    assert "topics: declared-breaks" in result.stderr


def _modules_loaded_by(*args: str) -> set[str]:
    """The modules a run of the command line has imported by the time it exits."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(*sorted(sys.modules), file=sys.stderr))\n"
        f"sys.argv = ['upgrade-guard', *{list(args)!r}]\n"
        "from upgrade_guard.cli import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return set(done.stderr.split())


def test_a_command_imports_only_its_own_code(tmp_path: Path) -> None:
    version = _modules_loaded_by("--version")
    assert {m for m in version if m.startswith("upgrade_guard.")} == {"upgrade_guard.cli"}

    crds = _write(tmp_path / "crds.yaml", field_crd({"type": "string"}))
    diff = _modules_loaded_by("diff", crds, crds)
    assert "upgrade_guard.commands.diff" in diff
    others = {f"upgrade_guard.commands.{module}" for module, _ in cli.COMMANDS.values()}
    assert not diff & (others - {"upgrade_guard.commands.diff"})
    assert not {m for m in diff if m.split(".")[0] == "kubernetes"}
    # Nor what only other inputs and options need: the file takes the fast YAML path, the
    # CRD holds no CEL rule, one process reads both sides, no format needs the email package,
    # nothing is written, and no counter is read.
    unneeded = {"yaml", "multiprocessing", "email", "upgrade_guard.write", "upgrade_guard.counters"}
    unneeded |= {"upgrade_guard.apiserver.cel_cost", "upgrade_guard.apiserver.cel_compile"}
    assert not diff & unneeded
    # Each report format's code is imported when that format is printed: rich for text only.
    assert "rich" in diff
    assert "rich" not in _modules_loaded_by("diff", crds, crds, "--output", "json")
