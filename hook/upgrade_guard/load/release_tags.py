"""The CRDs at every release tag of a repository, read with git (no checkout).

Releases are the tags matching a glob (``fnmatch``: ``*`` also crosses ``/``), ordered by
the version in their name (``v1.2.0-rc.1`` before ``v1.2.0`` before ``v1.10.0``), so a
patch release made later on an older branch sits where its version puts it. Each release's
date is its tag's (see ``Repository.tags``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from upgrade_guard.crd import Crd
from upgrade_guard.lifecycle.timeline import Release
from upgrade_guard.load import git_tree
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError

_VERSION = re.compile(r"([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]*)?\Z")


def version_order(tag: str) -> tuple[Any, ...]:
    """A sort key: the dotted numbers, then pre-releases before the final release."""
    digit = re.search(r"[0-9]", tag)
    match = _VERSION.match(tag[digit.start() :]) if digit else None
    if match is None:
        raise LoadError(
            f"tag {tag}: not a version such as v1.2.3 (releases are ordered by version;"
            " narrow --releases to version tags)"
        )
    numbers = tuple(int(part) for part in match.group(1).split("."))
    pre = match.group(2)
    if pre is None:
        return numbers, (1,), tag
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return numbers, (0, parts), tag


def read_releases(
    repository: git_tree.Repository,
    pattern: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    none_is_bad: bool = True,
) -> list[Release]:
    """The CRDs under the repository's prefix at each tag matching pattern, oldest first.
    No matching tag is bad history unless none_is_bad is false (a first release to come)."""
    shown = repository.prefix or "."
    tags = [tag for tag in repository.tags() if fnmatch.fnmatchcase(tag[0], pattern)]
    if not tags and none_is_bad:
        raise LoadError(f"--releases {pattern!r}: no tag in {repository.root} matches")
    releases = []
    read: dict[str, Mapping[str, Crd]] = {}  # tags on one commit are read once
    for name, commit, date in sorted(tags, key=lambda tag: version_order(tag[0])):
        try:
            when = datetime.fromisoformat(date)
        except ValueError:
            raise LoadError(f"tag {name}: git gave no date ({date!r})") from None
        if commit not in read:
            tree = git_tree.GitTree(repository, name, commit)
            read[commit] = git_tree.crds_in(tree, repository.prefix, max_bytes, stored=True)
        crds = read[commit]
        if not crds:
            raise LoadError(f"tag {name}: no CustomResourceDefinitions under {shown}")
        releases.append(Release(name, when, crds))
    return releases


def with_candidate(
    releases: list[Release],
    repository: git_tree.Repository,
    tag: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[Release]:
    """The releases plus the working tree as release tag, made now, in version order: the
    release about to be tagged, judged before it is."""
    if any(release.tag == tag for release in releases):
        raise LoadError(f"--next {tag}: already a release tag; name the release to come")
    version_order(tag)
    crds = git_tree.crds_in(git_tree.WorkTree(repository), repository.prefix, max_bytes)
    if not crds:
        raise LoadError(f"--next {tag}: no CustomResourceDefinitions in the working tree")
    candidate = Release(tag, datetime.now(UTC), crds)
    return sorted([*releases, candidate], key=lambda release: version_order(release.tag))
