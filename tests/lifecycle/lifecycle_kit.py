"""Helpers for the lifecycle tests: real git repositories whose release tags carry explicit
dates, verify-lifecycle run in them, and a builder that turns a corpus project's tag
directories into such a repository."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from counters.history_kit import GitRepo
from crd_builders import crd, spec_schema, version


def versions(*entries: dict[str, Any]) -> dict[str, Any]:
    """widgets.example.com with exactly these spec.versions entries."""
    return crd(*entries)


def served(name: str, storage: bool = False, **extra: Any) -> dict[str, Any]:
    """A served version entry with a string spec.size (extra keys: deprecated, schema...)."""
    return version(name, spec_schema(size={"type": "string"}), storage=storage, **extra)


class ReleaseRepo(GitRepo):
    """A work tree whose releases are commits with explicit dates, each tagged."""

    def release(self, tag: str, date: str, *bodies: dict[str, Any]) -> None:
        """Write exactly these CRDs to crds/, commit them dated date (ISO 8601), tag."""
        shutil.rmtree(self.root / "crds", ignore_errors=True)
        for body in bodies:
            self.write_crd(body)
        self.commit_dated(date, f"release {tag}")
        self.git("tag", tag)

    def commit_dated(self, date: str, message: str) -> None:
        self.git("add", "-A")
        saved = dict(self.env)
        self.env.update({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
        try:
            self.git("commit", "-q", "--allow-empty", "-m", message)
        finally:
            self.env = saved

    def lifecycle(
        self, *args: str, policy: dict[str, Any] | None = None, directory: str = "crds"
    ) -> tuple[int, dict[str, Any]]:
        """verify-lifecycle DIR ARGS --output json (with the lifecycle policy given):
        (exit code, report)."""
        extra: list[str] = []
        if policy is not None:
            path = self.root.parent / "policy.yaml"
            path.write_text(yaml.safe_dump({"lifecycle": policy}))
            extra = ["--policy", str(path)]
        done = self.ug("verify-lifecycle", directory, *args, *extra, "--output", "json")
        assert done.returncode in (0, 1), done.stdout + done.stderr
        return done.returncode, json.loads(done.stdout)


def found(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(code, version, tag of the release that makes it one) of every finding that refuses."""
    return {
        (f["code"], f["version"], f["new"]["tag"])
        for f in report["findings"]
        if f["severity"] == "error" and not f["excused"]
    }


def corpus_releases(project_dir: Path) -> list[tuple[str, str, int]]:
    """(tag, commit date, final releases since the previous sample) from RELEASES.tsv."""
    with (project_dir / "RELEASES.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        (row["tag"], row["commit_date"], int(row["final_releases_since_previous_sample"] or 0))
        for row in rows
    ]


def corpus_repository(project_dir: Path, root: Path) -> ReleaseRepo:
    """A repository in root with one dated, tagged commit per sampled tag of the project
    (its CRD files under crds/), and, for the final releases the corpus did not sample,
    lightweight tags <previous sample>.1, .2, ... on the previous sample's commit: release
    counts come out as RELEASES.tsv gives them, and each unsampled release is taken to
    carry the CRDs of the sample before it (the only ones known)."""
    repo = ReleaseRepo(root)
    previous = ""
    for tag, date, since in corpus_releases(project_dir):
        for unsampled in range(1, since):
            repo.git("tag", f"{previous}.{unsampled}", previous)
        shutil.rmtree(repo.root / "crds", ignore_errors=True)
        shutil.copytree(project_dir / tag, repo.root / "crds")
        repo.commit_dated(date, f"release {tag}")
        repo.git("tag", tag)
        previous = tag
    return repo
