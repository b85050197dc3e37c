"""`upgrade-guard verify-lifecycle DIR --releases GLOB`: the API lifecycle over release tags.

The releases read at their tags, the engine's breaking changes between each and the one
before, every lifecycle rule run over that history, one judgement, in release order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Annotated

import typer

from upgrade_guard import engine, rules
from upgrade_guard.commands import options
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Finding, Outcome, Severity
from upgrade_guard.judging import Changes, Placed, judge
from upgrade_guard.lifecycle.timeline import Release, ReleaseHistory
from upgrade_guard.load import git_tree
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES
from upgrade_guard.load.release_tags import read_releases, with_candidate
from upgrade_guard.policy import Policy
from upgrade_guard.rules.kinds import LifecycleRule


def breaking_changes(
    releases: Sequence[Release], policy: Policy
) -> dict[tuple[int, str, str], list[Finding]]:
    """The engine's errors inside versions served by both a release and the one before, by
    (index, crd, version); policy severities apply, declared breaks do not."""
    judged = replace(policy, declared_breaks=(), storage_version_only=False)
    found: dict[tuple[int, str, str], list[Finding]] = {}
    for index in range(1, len(releases)):
        before, after = releases[index - 1].crds, releases[index].crds
        shared = sorted(before.keys() & after.keys())
        outcome = engine.compare_crds(
            {name: before[name] for name in shared},
            {name: after[name] for name in shared},
            judged,
            None,
        )
        for finding in outcome.findings:
            name, version = finding.crd, finding.version
            if (
                finding.severity is Severity.ERROR
                and name is not None
                and version is not None
                and _served(before, name, version)
                and _served(after, name, version)
            ):
                found.setdefault((index, name, version), []).append(finding)
    return found


def _served(crds: Mapping[str, Crd], name: str, version: str) -> bool:
    return version in crds[name].served_versions if name in crds else False


def verify_lifecycle(releases: Sequence[Release], policy: Policy) -> Outcome:
    """Judge the releases, oldest first, by the policy's lifecycle section."""
    history = ReleaseHistory(tuple(releases), policy.lifecycle, breaking_changes(releases, policy))
    found = [
        Placed(
            rule,
            violation.crd,
            violation.version,
            None,
            Change(
                None,
                violation.message,
                violation.old,
                violation.new,
                notes=(*violation.notes, history.timeline(violation.crd, violation.version)),
                excused=violation.excused,
            ),
            step=violation.release,
        )
        for rule in rules.ALL_RULES
        if isinstance(rule, LifecycleRule)
        for violation in rule.check(history)
    ]
    # lifecycle.breaks excuse its findings (each rule reads them), not declared-breaks.
    unbroken = replace(policy, declared_breaks=())
    return judge(Changes(tuple(found), len(history.crd_names)), unbroken)


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
