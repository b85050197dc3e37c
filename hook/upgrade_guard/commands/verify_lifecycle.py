"""`upgrade-guard verify-lifecycle DIR --releases GLOB`: the API lifecycle over release tags."""

from __future__ import annotations

from typing import Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.lifecycle.verify import verify_lifecycle
from upgrade_guard.load import git_tree
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES
from upgrade_guard.load.releases import read_releases, with_candidate


@options.guarded
def verify_lifecycle_command(
    directory: Annotated[str, typer.Argument(help="The CRD directory, inside a git work tree.")],
    releases: Annotated[
        str,
        typer.Option(help="Glob of the release tags, such as 'v*' or 'v*.*.0' (minors only)."),
    ] = "v*",
    next_release: Annotated[
        str | None,
        typer.Option(
            "--next",
            metavar="TAG",
            help="Also judge the working tree, as release TAG made now (before tagging it).",
        ),
    ] = None,
    policy: options.PolicyOption = None,
    output: options.OutputOption = options.TEXT,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
) -> None:
    """Check version tiers, deprecation windows and graduation order over every release
    tag; exit 0 safe, 1 refused, 2 bad input or bad history."""
    chosen = options.policy_from(policy)
    repository = git_tree.Repository.containing(directory)
    history = read_releases(repository, releases, max_bytes, none_is_bad=next_release is None)
    if next_release is not None:
        history = with_candidate(history, repository, next_release, max_bytes)
    outcome = verify_lifecycle(history, chosen)
    options.write_report(outcome, output)
    raise typer.Exit(int(outcome.exit_code))
