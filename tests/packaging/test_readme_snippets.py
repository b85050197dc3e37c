"""The README's install line, pre-commit configuration and GitHub Actions steps, run as
written in a scratch git repository: pre-commit through its own CLI, the Actions steps as
shell. The one substitution is the repository URL, which points at a local copy of this
checkout (tagged as the README's tag), since nothing here is published."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest
import yaml

from counters.history_kit import GIT_ENV

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
PUBLISHED = "https://github.com/OWNER/upgrade-guard"
CRDS = "charts/my-operator/crds"
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("UPGRADE_GUARD_", "VIRTUAL_ENV"))}
ENV.update(GIT_ENV)


def snippet(heading: str, language: str) -> str:
    """The first ```language block after the heading."""
    section = README.split(f"\n{heading}\n", 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)
    assert match, heading
    return match.group(1)


def sh(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env={**ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def git(cwd: Path, *args: str) -> str:
    done = sh(cwd, "git", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A copy of this checkout (tracked and new files, as they are now) in its own git
    repository, tagged with the README's tag: (URL, tag)."""
    mirror = tmp_path_factory.mktemp("upgrade-guard")
    files = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (mirror / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, mirror / name)
    tag = re.search(r"@(v[0-9.]+)\"", snippet("## Install", "sh"))
    assert tag, "the install line names a tag"
    git(mirror, "init", "-q", "-b", "main")
    git(mirror, "add", "-A")
    git(mirror, "commit", "-q", "-m", "release")
    git(mirror, "tag", tag.group(1))
    return f"file://localhost{mirror}", tag.group(1)  # old pip wants a host


def crd(**properties: Any) -> str:
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": properties}},
                        }
                    },
                }
            ],
        },
    }
    return yaml.safe_dump(body, sort_keys=False)


def adopt_commands() -> list[list[str]]:
    lines = snippet("### Adopt in two commands", "sh").strip().splitlines()
    return [line.split() for line in lines]


def project(root: Path) -> Path:
    (root / CRDS).mkdir(parents=True)
    (root / CRDS / "widgets.yaml").write_text(
        crd(size={"type": "string"}, legacy={"type": "string"})
    )
    git(root, "init", "-q", "-b", "main")
    return root


def test_pre_commit_snippet_runs_as_written(tmp_path: Path, published: tuple[str, str]) -> None:
    url, _ = published
    root = project(tmp_path / "my-operator")
    config = snippet("### pre-commit", "yaml").replace(PUBLISHED, url)
    (root / ".pre-commit-config.yaml").write_text(config)
    pre_commit = [str(Path(sys.executable).parent / "pre-commit")]
    home = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    assert sh(root, *pre_commit, "install", env=home).returncode == 0

    git(root, "add", "-A")
    refused = sh(root, "git", "commit", "-q", "-m", "CRDs, unstamped", env=home)
    assert refused.returncode != 0
    assert f"run `upgrade-guard stamp {CRDS} --bump`" in refused.stdout + refused.stderr

    upgrade_guard = Path(sys.executable).parent / "upgrade-guard"
    for program, *args in adopt_commands():  # the README's "Adopt in two commands"
        assert program == "upgrade-guard"
        done = sh(root, str(upgrade_guard), *args)
        assert done.returncode == 0, done.stdout + done.stderr
    git(root, "add", "-A")
    adopted = sh(root, "git", "commit", "-q", "-m", "adopt upgrade-guard", env=home)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr

    # An intended break, declared in the policy found by convention: the commit passes.
    (root / CRDS / "widgets.yaml").write_text(
        crd(size={"type": "string"}).replace("metadata:\n", "metadata:\n  annotations: {}\n")
    )
    assert sh(root, str(upgrade_guard), "stamp", CRDS, "--bump").returncode == 0
    policy = {
        "declared-breaks": [
            {
                "crd": "widgets.example.com",
                "rule": "property-removed",
                "path": "spec.legacy",
                "version": "v1",
                "schema-version": 2,
                "reason": "legacy was never read",
            }
        ]
    }
    (root / ".upgrade-guard.yaml").write_text(yaml.safe_dump(policy, sort_keys=False))
    git(root, "add", "-A")
    declared = sh(root, "git", "commit", "-q", "-m", "drop legacy", env=home)
    assert declared.returncode == 0, declared.stdout + declared.stderr


def actions_steps() -> list[dict[str, Any]]:
    steps = yaml.safe_load(snippet("### GitHub Actions", "yaml"))
    assert isinstance(steps, list)
    return steps


def test_actions_steps_run_as_shell(tmp_path: Path, published: tuple[str, str]) -> None:
    url, _ = published
    root = project(tmp_path / "my-operator")
    upgrade_guard = str(Path(sys.executable).parent / "upgrade-guard")
    for _, *args in adopt_commands():
        assert sh(root, upgrade_guard, *args).returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "adopted")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")  # the base branch
    git(root, "checkout", "-q", "-b", "feature")
    (root / CRDS / "widgets.yaml").write_text(
        (root / CRDS / "widgets.yaml").read_text().replace("legacy:", "color:")
    )  # a pull request that removes a property and forgets to restamp

    runner = tmp_path / "runner"
    venv.EnvBuilder(with_pip=True).create(runner)
    path = f"{runner / 'bin'}:{ENV['PATH']}"
    github = {"github.base_ref": "main"}
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    for step in actions_steps():
        if "uses" in step:
            assert step["uses"].startswith(("actions/checkout@", "actions/setup-python@"))
            continue
        script = step["run"].replace(PUBLISHED, url)
        script = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: github[m.group(1)], script)
        env = {"PATH": path, **{k: str(v) for k, v in (step.get("env") or {}).items()}}
        outputs.append((script, sh(root, "bash", "-eo", "pipefail", "-c", script, env=env)))
    (_, installed), (counters_step, checked) = outputs
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert f"run `upgrade-guard stamp {CRDS} --bump`" in checked.stdout

    assert sh(root, upgrade_guard, "stamp", CRDS, "--bump").returncode == 0
    rerun = sh(
        root,
        "bash",
        "-eo",
        "pipefail",
        "-c",
        counters_step,
        env={"PATH": path, "UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE": "1"},
    )
    assert rerun.returncode == 1  # the removed property is a break nobody declared
    annotation = next(line for line in rerun.stdout.splitlines() if "UG201" in line)
    assert annotation.startswith("::error file=charts/my-operator/crds/"), annotation
    assert ",title=UG201 property-removed::" in annotation, annotation
    assert "policy: none (built-in defaults)" in rerun.stdout
