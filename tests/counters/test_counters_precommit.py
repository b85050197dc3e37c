"""The pre-commit hooks the repository offers run the commands they name."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml
from history_kit import GitRepo, widget

HOOKS = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


def test_hooks_run_stamp_check_and_verify_history(repo: GitRepo) -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text())}
    assert set(hooks) == {"upgrade-guard-stamp-check", "upgrade-guard-verify-history"}
    repo.release(widget(), schema_version=1)
    repo.write_crd(widget(size={"type": "integer"}))  # changed, not restamped
    for hook in hooks.values():
        assert hook["pass_filenames"] is False and hook["language"] == "python"
        program, *args = shlex.split(hook["entry"])
        assert program == "upgrade-guard"
        done = repo.ug(*args, "crds", process=True)
        assert done.returncode == 1, (hook["id"], done.stdout, done.stderr)
