"""`upgrade-guard diff OLD NEW`: compare two CRD sets offline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from upgrade_guard import diffing, engine
from upgrade_guard.apiserver import minors
from upgrade_guard.commands import options
from upgrade_guard.findings import Outcome
from upgrade_guard.judging import Context, judge
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError
from upgrade_guard.load.rendered import read_manifests
from upgrade_guard.policy import SCHEMA_VERSION, declared_break_entries
from upgrade_guard.subjects import Release, RoleSubject


def _declare_breaks(outcome: Outcome, policy: str | None, release: Release) -> None:
    """The entries carry the schema version this comparison rises to, when it rises."""
    from upgrade_guard.write import declared_breaks  # (the writer only this option uses)

    rises = release.after is not None and release.after > (release.before or 0)
    entries = declared_break_entries(outcome.findings, release.after if rises else None)
    if not entries:
        typer.echo("upgrade-guard: nothing to declare: no finding refuses", err=True)
        return
    target = declared_breaks.policy_to_edit(policy, Path.cwd())
    declared_breaks.append_declared_breaks(target, entries)
    covered = sum(count for count, _ in entries)
    typer.echo(
        f"upgrade-guard: wrote {len(entries)} declared breaks ({covered} findings) to {target};"
        ' fill in each reason: "" (the policy is refused until every reason says why)',
        err=True,
    )


@options.guarded
def diff(
    old: Annotated[
        str, typer.Argument(metavar="OLD", help="Live or previous CRDs: file, directory or -.")
    ],
    new: Annotated[
        str, typer.Argument(metavar="NEW", help="CRDs about to be applied: file, directory or -.")
    ],
    policy: options.PolicyOption = None,
    kube_version: Annotated[
        str | None,
        typer.Option(
            metavar="X.Y",
            help="Cluster version MAJOR.MINOR: the CRDs its apiserver accepts; enables ratcheting.",
        ),
    ] = None,
    output: options.OutputOption = options.TEXT,
    witnesses: options.WitnessesOption = False,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
    declare_breaks: Annotated[
        bool,
        typer.Option(
            "--declare-breaks",
            help="Append every refusing finding to the policy as a declared break with"
            ' reason: "" (one per CRD, version and path) for a person to fill in.',
        ),
    ] = False,
    allow_no_crds: Annotated[
        bool,
        typer.Option(
            "--allow-no-crds",
            help="Accept a side without CRDs (a first release, a chart dropping its CRDs).",
        ),
    ] = False,
) -> None:
    """Compare two CRD sets, or two rendered charts (their CRDs and the operator's
    ClusterRoles and Roles); exit 0 safe, 1 refused, 2 bad input."""
    if old == "-" and new == "-":
        raise options.UsageProblem("only one of OLD and NEW can be read from standard input")
    version = options.parse_kube_version(kube_version)
    minor, note = minors.judged_as(version) if version is not None else (minors.NEWEST, None)
    chosen = options.policy_from(policy)
    compared = diffing.read_and_compare(old, new, max_bytes, chosen, minor)
    before, after = compared.before, compared.after
    for argument, side, crds in ((old, "OLD", before), (new, "NEW", after)):
        if not crds and not allow_no_crds:
            raise LoadError(
                f"{argument}: no CustomResourceDefinitions in {side} (a wrong path?);"
                " give --allow-no-crds if that is meant"
            )
    roles = RoleSubject(
        after=read_manifests(new, max_bytes).roles, before=read_manifests(old, max_bytes).roles
    )
    changes = compared.changes.merged(engine.role_changes(roles))
    release = Release.between(before, after, chosen.annotation(SCHEMA_VERSION))
    outcome = judge(changes, chosen, Context(version, release))
    if note is not None:
        outcome = replace(outcome, facts=(*outcome.facts, ("note", note)))
    if output == "github":
        from upgrade_guard.load import locations  # (a YAML reader that keeps lines)

        outcome = replace(outcome, findings=locations.located(outcome.findings, after))
    options.write_report(outcome, output, witnesses)
    if declare_breaks:
        _declare_breaks(outcome, policy, release)
    raise typer.Exit(int(outcome.exit_code))
