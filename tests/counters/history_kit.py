"""Helpers for the counter tests: real git repositories in temporary directories, the CLI run
in them as a user would, and small CRDs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from crd_builders import crd, spec_schema, version
from upgrade_guard import cli

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def widget(**fields: Any) -> dict[str, Any]:
    """widgets.example.com with the given fields under spec (a string `size` by default)."""
    return crd(version(schema=spec_schema(**(fields or {"size": {"type": "string"}}))))


def gadget(**fields: Any) -> dict[str, Any]:
    """A second CRD, gadgets.example.com."""
    body = copy.deepcopy(widget(**fields))
    body["metadata"]["name"] = "gadgets.example.com"
    body["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    return body


class GitRepo:
    """A work tree with a crds/ directory; `ug` runs upgrade-guard inside it."""

    def __init__(self, root: Path, init: bool = True) -> None:
        self.root = root
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("UPGRADE_GUARD_")}
        self.env.update(GIT_ENV)
        root.mkdir(parents=True, exist_ok=True)
        if init:
            self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def write_crd(self, body: dict[str, Any], directory: str = "crds") -> Path:
        """Write body as crds/<name>.yaml, keeping the annotations the file already has."""
        name = body["metadata"]["name"]
        path = self.root / directory / f"{name}.yaml"
        if path.is_file():
            annotations = (yaml.safe_load(path.read_text())["metadata"]).get("annotations")
            if annotations:
                body = copy.deepcopy(body)
                body["metadata"]["annotations"] = annotations
        return self.write(f"{directory}/{name}.yaml", yaml.safe_dump(body, sort_keys=False))

    def remove(self, relative: str) -> None:
        (self.root / relative).unlink()

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def ug(
        self, *args: str, env: dict[str, str] | None = None, process: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """upgrade-guard ARGS run in the work tree: in this process (fast) or, with process,
        as `python -m upgrade_guard` exactly as a user runs it."""
        if process:
            return subprocess.run(
                [sys.executable, "-m", "upgrade_guard", *args],
                cwd=self.root,
                env={**self.env, **(env or {})},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        environment: dict[str, str | None] = {
            key: None for key in os.environ if key.startswith("UPGRADE_GUARD_")
        }
        environment.update(GIT_ENV)
        environment.update(env or {})
        previous = os.getcwd()
        os.chdir(self.root)
        try:
            result = CliRunner().invoke(cli.app, list(args), env=environment)
        finally:
            os.chdir(previous)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)

    def stamp(self, schema_version: int | None = None, *extra: str) -> None:
        args = ["stamp", "crds", *extra]
        if schema_version is not None:
            args += ["--schema-version", str(schema_version)]
        done = self.ug(*args)
        assert done.returncode == 0, done.stdout + done.stderr

    def release(self, *bodies: dict[str, Any], schema_version: int | None, tag: str = "") -> str:
        """Write exactly these CRDs, stamp them (unless schema_version is None), commit."""
        for old in (self.root / "crds").glob("*.yaml") if (self.root / "crds").is_dir() else []:
            old.unlink()
        for body in bodies:
            self.write_crd(body)
        if schema_version is not None:
            self.stamp(schema_version)
        commit = self.commit(f"release {schema_version}")
        if tag:
            self.git("tag", tag)
        return commit

    def verify(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """verify-history crds ... --output json: (exit code, report)."""
        done = self.ug("verify-history", "crds", *args, "--output", "json", env=env)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        return done.returncode, json.loads(done.stdout)


def refusals(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    """(code, crd) of every finding that refuses."""
    return {
        (f["code"], f["crd"])
        for f in report["findings"]
        if f["severity"] == "error" and not f["excused"]
    }


def codes(report: dict[str, Any]) -> set[str]:
    return {code for code, _ in refusals(report)}
