"""Files of a git repository at a ref, or in its working tree, read with git (no checkout).

A Tree lists and reads files by repository-relative POSIX path. ``GitTree`` reads a commit
with ``git ls-tree`` and ``git cat-file --batch`` (one process for all blobs);
``WorkTree`` reads the files git would see (tracked and untracked, not ignored) from disk.
Every git failure is a LoadError naming the ref and the path.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from upgrade_guard.crd import Crd
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, Document, LoadError, documents_of
from upgrade_guard.load.rendered import Rendered, rendered_from

CRD_SUFFIXES = (".yaml", ".yml", ".json")
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


def _git(root: Path, *args: str, what: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            env={**os.environ, **_ENV},
            check=False,
        )
    except FileNotFoundError:
        raise LoadError(f"{what}: git is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LoadError(f"{what}: git {args[0]} failed: {message[-1] if message else done}")
    return done.stdout


@dataclass(frozen=True)
class Repository:
    """A git work tree, and where a directory given on the command line sits in it."""

    root: Path
    prefix: str  # the directory, relative to root, POSIX, "" for the root itself

    @classmethod
    def containing(cls, directory: str) -> Repository:
        path = Path(directory)
        if not path.exists():
            raise LoadError(f"{directory}: no such file or directory")
        where = path if path.is_dir() else path.parent
        top = _git(where, "rev-parse", "--show-toplevel", what=directory).decode().strip()
        root = Path(top).resolve()
        try:
            relative = path.resolve().relative_to(root)
        except ValueError:
            raise LoadError(f"{directory}: not inside the git work tree {root}") from None
        prefix = relative.as_posix()
        return cls(root, "" if prefix == "." else prefix)

    def commit(self, ref: str) -> str | None:
        """The commit ref names, or None when it names nothing (as HEAD^ of a first commit)."""
        done = subprocess.run(
            ["git", "-C", str(self.root), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            capture_output=True,
            env={**os.environ, **_ENV},
            check=False,
        )
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def tags(self) -> list[tuple[str, str, str]]:
        """(name, commit, ISO date) of every tag: an annotated tag's date is its tagger's,
        a lightweight tag's that of its commit."""
        out = _git(
            self.root,
            "for-each-ref",
            "--format=%(refname:strip=2)%00%(objectname)%00%(*objectname)%00"
            "%(creatordate:iso-strict)",
            "refs/tags",
            what=f"{self.root}: tags",
        )
        found = []
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            name, target, peeled, date = line.split("\0")
            found.append((name, peeled or target, date))
        return found

    def has_changes(self, prefix: str, patterns: Iterable[str] = ()) -> bool:
        """Whether the working tree differs from HEAD under prefix or in files matching the
        glob patterns (untracked files count)."""
        out = _git(
            self.root,
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--",
            prefix or ".",
            *(f":(glob){pattern.strip().lstrip('/')}" for pattern in patterns),
            what=f"{self.root}: working tree",
        )
        return bool(out.strip(b"\0"))


class Tree:
    """Files by repository-relative path; label says where they come from."""

    label: str

    def paths(self, prefix: str) -> list[str]:
        raise NotImplementedError

    def read(self, paths: Iterable[str]) -> dict[str, bytes]:
        raise NotImplementedError


class GitTree(Tree):
    def __init__(self, repository: Repository, ref: str, commit: str | None) -> None:
        self.repository = repository
        self.ref = ref
        self.commit = commit  # None: the ref names nothing, the tree is empty
        self.label = ref
        self._listing: dict[str, str] | None = None

    def _list(self) -> dict[str, str]:
        if self._listing is None:
            self._listing = {}
            if self.commit is not None:
                out = _git(
                    self.repository.root,
                    "ls-tree",
                    "-r",
                    "-z",
                    "--full-tree",
                    self.commit,
                    what=f"{self.ref}",
                )
                for record in out.split(b"\0"):
                    if not record:
                        continue
                    meta, _, path = record.partition(b"\t")
                    mode, kind, sha = meta.decode().split()
                    if kind == "blob" and mode != "120000":
                        self._listing[path.decode("utf-8", "surrogateescape")] = sha
        return self._listing

    def paths(self, prefix: str) -> list[str]:
        return sorted(path for path in self._list() if _under(path, prefix))

    def read(self, paths: Iterable[str]) -> dict[str, bytes]:
        wanted = list(paths)
        if not wanted:
            return {}
        listing = self._list()
        shas = [listing[path] for path in wanted]
        out = _git(
            self.repository.root,
            "cat-file",
            "--batch",
            what=f"{self.ref}:{wanted[0]}",
            stdin=("\n".join(shas) + "\n").encode(),
        )
        result: dict[str, bytes] = {}
        position = 0
        for path, sha in zip(wanted, shas, strict=True):
            header_end = out.index(b"\n", position)
            header = out[position:header_end].decode().split()
            if len(header) != 3 or header[0] != sha:
                raise LoadError(f"{self.ref}:{path}: git cat-file gave {' '.join(header)}")
            size = int(header[2])
            start = header_end + 1
            result[path] = out[start : start + size]
            position = start + size + 1
        return result


class WorkTree(Tree):
    """The files git sees in the working tree: tracked and untracked, not ignored."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self.label = "working tree"

    def paths(self, prefix: str) -> list[str]:
        out = _git(
            self.repository.root,
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--full-name",
            "--",
            prefix or ".",
            what=f"{self.repository.root / prefix}",
        )
        paths = {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}
        return sorted(p for p in paths if (self.repository.root / p).is_file())

    def read(self, paths: Iterable[str]) -> dict[str, bytes]:
        result: dict[str, bytes] = {}
        for path in paths:
            try:
                result[path] = (self.repository.root / path).read_bytes()
            except OSError as error:
                raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
        return result


def _under(path: str, prefix: str) -> bool:
    return not prefix or path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses directories, ``*`` and ``?`` do not; a plain directory means all in it."""
    parts: list[str] = []
    index = 0
    text = pattern.strip().lstrip("/")
    while index < len(text):
        if text.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif text.startswith("**", index):
            parts.append(".*")
            index += 2
        elif text[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif text[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(text[index]))
            index += 1
    return re.compile("".join(parts) + "(?:/.*)?\\Z")


def matching(paths: Iterable[str], patterns: Iterable[str]) -> list[str]:
    """The paths that match any of the glob patterns (repository-relative)."""
    compiled = [_glob_regex(pattern) for pattern in patterns]
    return sorted(path for path in paths if any(regex.match(path) for regex in compiled))


def crds_in(
    tree: Tree, prefix: str, max_bytes: int = DEFAULT_MAX_BYTES, *, stored: bool = False
) -> dict[str, Crd]:
    """The CRDs of the .yaml/.yml/.json files under prefix in tree, by name."""
    return rendered_in(tree, prefix, max_bytes, stored=stored).crds


def rendered_in(
    tree: Tree, prefix: str, max_bytes: int = DEFAULT_MAX_BYTES, *, stored: bool = False
) -> Rendered:
    """The CRDs, roles and webhook configurations of the files under prefix in tree.
    ``stored``: a tree released already (a baseline, a release tag), whose CRDs are read as an
    apiserver holds them (``crds_from``): what an older apiserver accepted is not refused."""
    paths = [path for path in tree.paths(prefix) if path.endswith(CRD_SUFFIXES)]
    contents = tree.read(paths)
    used = sum(len(data) for data in contents.values())
    if used > max_bytes:
        raise LoadError(f"{tree.label}:{prefix}: more than {max_bytes} bytes of CRD files")
    documents: list[Document] = []
    for path in paths:
        name = path if isinstance(tree, WorkTree) else f"{tree.label}:{path}"
        documents.extend(documents_of(name, contents[path]))
    return rendered_from(documents, stored=stored)


def contents_of(tree: Tree, patterns: Iterable[str]) -> Mapping[str, bytes]:
    """The files of tree matching the glob patterns, by repository-relative path."""
    return tree.read(matching(tree.paths(""), patterns))


@dataclass(frozen=True)
class Baseline:
    """What verify-history compares: the baseline tree, the candidate tree, and why these."""

    baseline: Tree
    candidate: Tree
    reason: str


def choose_baseline(
    repository: Repository,
    baseline_ref: str | None,
    counter_patterns: Iterable[str] = (),
) -> Baseline:
    """The explicit ref against the working tree; else the working tree against HEAD when the
    directory (or a counter's files) has uncommitted changes; else HEAD against HEAD^."""
    shown = repository.prefix or "."
    if baseline_ref:
        commit = repository.commit(baseline_ref)
        if commit is None:
            raise LoadError(f"--baseline-ref {baseline_ref}: no such commit in {repository.root}")
        return Baseline(
            GitTree(repository, baseline_ref, commit),
            WorkTree(repository),
            f"explicit: the working tree against {baseline_ref}",
        )
    patterns = list(counter_patterns)
    if repository.has_changes(repository.prefix, patterns):
        counted = " (or a counter's files)" if patterns else ""
        return Baseline(
            GitTree(repository, "HEAD", repository.commit("HEAD")),
            WorkTree(repository),
            f"guessed: {shown}{counted} has uncommitted changes, so the working tree against HEAD",
        )
    head = repository.commit("HEAD")
    if head is None:
        raise LoadError(f"{shown}: the repository has no commits")
    parent = repository.commit("HEAD^")
    reason = f"guessed: {shown} is clean, so HEAD against HEAD^"
    if parent is None:
        reason += " (HEAD has no parent: empty baseline)"
    return Baseline(GitTree(repository, "HEAD^", parent), GitTree(repository, "HEAD", head), reason)
