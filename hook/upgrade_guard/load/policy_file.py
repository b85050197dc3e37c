"""Read a policy file from disk into a Policy, or find the one the repository keeps.

By convention the policy is ``.upgrade-guard.yaml`` in the current directory or the nearest
parent up to the root of the git work tree it is in (the directory holding ``.git``), so
pre-commit hooks and CI steps find it without ``--policy``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from upgrade_guard.load.documents import LoadError, documents_of, load_documents
from upgrade_guard.policy import DEFAULT_POLICY, Policy, controllers_of, parse_policy
from upgrade_guard.subjects import Controller

if TYPE_CHECKING:
    from upgrade_guard.load.git_tree import Repository, Tree

CONVENTIONAL_NAME = ".upgrade-guard.yaml"


def read_policy(path: str) -> Policy:
    documents = list(load_documents(path))
    if len(documents) != 1:
        raise LoadError(f"{path}: a policy file holds exactly one YAML document")
    return parse_policy(documents[0].body, path)


def policy_in_repository(path: str | None, start: Path, repository: Repository) -> str | None:
    """The chosen policy file's path in the repository (POSIX, from its root), or None when
    there is none or it lies outside."""
    found = Path(path) if path else find_policy(start)
    if found is None:
        return None
    try:
        return found.resolve().relative_to(repository.root).as_posix()
    except ValueError:
        return None


def controllers_in_tree(tree: Tree, path: str) -> Mapping[str, Controller]:
    """What each CRD's controller handles, as the policy a tree holds at path declares it
    (verify-history's baseline); nothing without one."""
    if path not in tree.paths(path):
        return {}
    where = f"{tree.label}:{path}"
    documents = list(documents_of(where, tree.read([path])[path]))
    if len(documents) != 1:
        raise LoadError(f"{where}: a policy file holds exactly one YAML document")
    return controllers_of(documents[0].body, where)


def find_policy(start: Path) -> Path | None:
    """The conventional policy file seen from start: start or a parent, up to the git root."""
    for directory in (start, *start.parents):
        candidate = directory / CONVENTIONAL_NAME
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def chosen_policy(path: str | None, start: Path) -> Policy:
    """The policy given with --policy, else the conventional file, else the defaults."""
    if path:
        return read_policy(path)
    found = find_policy(start)
    if found is None:
        return DEFAULT_POLICY
    return read_policy(os.path.relpath(found, start))
