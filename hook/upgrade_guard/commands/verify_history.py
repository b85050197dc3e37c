"""`upgrade-guard verify-history DIR`: the CRDs' schema version and counters against git."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.counters import digest
from upgrade_guard.counters.history import described, verify_history
from upgrade_guard.json_schema import did_you_mean
from upgrade_guard.load import git_tree, locations
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError
from upgrade_guard.load.policy_file import controllers_in_tree, policy_in_repository
from upgrade_guard.policy import Policy
from upgrade_guard.subjects import Side

REQUIRE_EXPLICIT_BASELINE_ENV = "UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE"
BASELINE_REF_ENV = "UPGRADE_GUARD_BASELINE_REF"


def side_of(
    tree: git_tree.Tree,
    prefix: str,
    policy: Policy,
    max_bytes: int,
    policy_path: str | None,
    *,
    baseline: bool = False,
) -> Side:
    """The CRDs and webhook configurations under prefix in tree, the digest of each
    counter's files, and the controllers the tree's own policy declares (the policy in use
    where it lies outside the repository, or for the working tree). The baseline's CRDs are
    read as stored (``git_tree.rendered_in``)."""
    file_digests = {
        counter.name: digest.files_digest(git_tree.contents_of(tree, counter.files))
        for counter in policy.counters
        if counter.files
    }
    controllers = policy.controllers
    if policy_path is not None and not isinstance(tree, git_tree.WorkTree):
        controllers = controllers_in_tree(tree, policy_path)
    rendered = git_tree.rendered_in(tree, prefix, max_bytes, stored=baseline)
    return Side(
        tree.label,
        rendered.crds,
        file_digests,
        controllers,
        rendered.manifests.webhooks,
    )


@options.guarded
def verify_history_command(
    directory: Annotated[
        str, typer.Argument(metavar="DIR", help="The CRD directory, inside a git work tree.")
    ],
    baseline_ref: Annotated[
        str | None,
        typer.Option(
            metavar="REF",
            envvar=BASELINE_REF_ENV,
            help="Compare the working tree with this ref. Default: the working tree against"
            " HEAD when DIR (or a counter's files) has uncommitted changes, else HEAD"
            " against HEAD^.",
        ),
    ] = None,
    require_explicit_baseline: Annotated[
        bool,
        typer.Option(
            "--require-explicit-baseline",
            envvar=REQUIRE_EXPLICIT_BASELINE_ENV,
            help="Refuse to guess the baseline (for CI).",
        ),
    ] = False,
    policy: options.PolicyOption = None,
    output: options.OutputOption = options.TEXT,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
) -> None:
    """Check the CRDs' schema version and counters against git history."""
    if require_explicit_baseline and not baseline_ref:
        raise options.UsageProblem(
            f"--require-explicit-baseline (or {REQUIRE_EXPLICIT_BASELINE_ENV}) is set:"
            " give --baseline-ref REF"
        )
    chosen = options.policy_from(policy)
    repository = git_tree.Repository.containing(directory)
    policy_path = policy_in_repository(policy, Path.cwd(), repository)
    watched = [pattern for c in chosen.counters for pattern in c.files]
    trees = git_tree.choose_baseline(
        repository, baseline_ref, [*watched, *([policy_path] if policy_path else [])]
    )
    before = side_of(
        trees.baseline, repository.prefix, chosen, max_bytes, policy_path, baseline=True
    )
    after = side_of(trees.candidate, repository.prefix, chosen, max_bytes, policy_path)
    if not before.crds and not after.crds:
        raise LoadError(
            f"{repository.prefix or '.'}: no CustomResourceDefinitions in {after.label}"
            f" or {before.label}"
        )
    try:
        result = verify_history(before, after, chosen, trees.reason, directory)
    except digest.DigestError as error:
        raise LoadError(str(error)) from None
    notes = [
        f"{chosen.source}: controllers names {name}, which is not among the candidate's"
        f" CRDs{did_you_mean(name, after.crds)}; nothing of it is checked"
        for name in sorted(after.controllers.keys() - after.crds.keys())
    ]
    if chosen.controllers and policy_path is None:
        notes.append(
            f"{chosen.source} lies outside the repository: its controllers are the same on"
            " both sides, so no change of them is seen"
        )
    if notes:
        result = described(replace(result, notes=(*result.notes, *notes)))
    outcome = result.outcome
    if output == "github":
        placed = locations.located(outcome.findings, after.crds, repository.root)
        outcome = replace(outcome, findings=placed)
    options.write_report(outcome, output)
    raise typer.Exit(int(result.outcome.exit_code))
