"""`upgrade-guard stamp DIR`: write the schema version, digest and counters into CRD files."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from upgrade_guard.commands import options
from upgrade_guard.commands.verify_history import BASELINE_REF_ENV
from upgrade_guard.counters import digest
from upgrade_guard.counters.history import next_schema_version
from upgrade_guard.crd import Crd
from upgrade_guard.findings import ExitCode
from upgrade_guard.load import git_tree, helm_template
from upgrade_guard.load.documents import (
    DEFAULT_MAX_BYTES,
    STDIN,
    Document,
    LoadError,
    documents_of,
    read_inputs,
)
from upgrade_guard.load.rendered import rendered_from
from upgrade_guard.manifests import WEBHOOK_KINDS
from upgrade_guard.policy import SCHEMA_DIGEST, SCHEMA_VERSION, Policy
from upgrade_guard.subjects import stamped_number
from upgrade_guard.write import stamper


@dataclass(frozen=True)
class CrdFile:
    path: Path
    text: str
    crds: dict[str, Crd]
    webhooks: tuple[str, ...] = ()  # the webhook configurations' keys (KIND NAME)
    template: bool = False  # a Helm template, read with its actions blanked out


def _documents(name: str, data: bytes) -> tuple[list[Document], bool]:
    """A file's documents, and whether it was read as a Helm template: as it is when it
    reads as YAML, else with its template actions blanked out (load/helm_template.py). A
    template that does not read even so, and names no kind stamp edits (a Deployment's
    template beside the CRDs' in a chart's templates/), holds nothing to stamp."""
    try:
        return list(documents_of(name, data)), False
    except LoadError:
        text = data.decode("utf-8", errors="replace")
        if not helm_template.is_template(text):
            raise
    try:
        return list(documents_of(name, helm_template.blanked(text).encode())), True
    except LoadError as error:
        if not any(kind in text for kind in ("CustomResourceDefinition", *WEBHOOK_KINDS)):
            return [], True
        raise LoadError(f"{error} (read as a Helm template, its actions blanked out)") from None


def crd_files(argument: str, max_bytes: int) -> list[CrdFile]:
    """The files under argument that hold CRDs or webhook configurations, with their text
    (stamping edits it in place)."""
    if argument == STDIN:
        raise options.UsageProblem("stamp edits files in place: give a file or directory, not -")
    found: list[CrdFile] = []
    for name, data in read_inputs(argument, max_bytes):
        documents, template = _documents(name, data)
        rendered = rendered_from(documents)
        crds, webhooks = rendered.crds, tuple(rendered.manifests.webhooks)
        if not crds and not webhooks:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LoadError(f"{name}: stamp edits UTF-8 text only ({error.reason})") from None
        found.append(CrdFile(Path(name), text, crds, webhooks, template))
    if not any(f.crds for f in found):
        raise LoadError(f"{argument}: no CustomResourceDefinitions to stamp")
    return found


def _bumped(
    directory: str, baseline_ref: str | None, files: list[CrdFile], policy: Policy, max_bytes: int
) -> int:
    repository = git_tree.Repository.containing(directory)
    trees = git_tree.choose_baseline(repository, baseline_ref)
    baseline = git_tree.crds_in(trees.baseline, repository.prefix, max_bytes, stored=True)
    candidate = {name: crd for f in files for name, crd in f.crds.items()}
    version, why = next_schema_version(baseline, candidate, policy)
    typer.echo(f"upgrade-guard: --bump: schema version {version}: {why} ({trees.reason})")
    return version


def _report_unversioned(files: list[CrdFile], version_key: str, bump_command: str) -> NoReturn:
    """stamp --check on CRDs without one schema version: what is missing, the fix, exit 1."""
    for crd_file in files:
        for name, crd in sorted(crd_file.crds.items()):
            carried = stamped_number(crd, version_key)
            shown = "no schema version" if carried is None else f"schema version {carried}"
            typer.echo(f"{crd_file.path}: CRD {name}: {shown}")
    typer.echo(f"upgrade-guard: the CRDs do not all carry one {version_key}; run `{bump_command}`")
    raise typer.Exit(int(ExitCode.REFUSED))


@options.guarded
def stamp(
    directory: Annotated[
        str, typer.Argument(metavar="DIR", help="CRD file or directory (recursively).")
    ],
    schema_version: Annotated[
        str | None,
        typer.Option(
            metavar="N", help="Schema version to stamp; default: the one already stamped."
        ),
    ] = None,
    counter: options.CounterOption = None,
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing; exit 1 if any file would change.")
    ] = False,
    policy: Annotated[
        str | None, typer.Option(metavar="FILE", help="Policy file (annotation prefix, counters).")
    ] = None,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
    bump: Annotated[
        bool,
        typer.Option(
            "--bump",
            help="Stamp the version verify-history expects, from the baseline in git: its"
            " version + 1 when a spec changed, the same when not, 1 on a first adoption.",
        ),
    ] = False,
    baseline_ref: Annotated[
        str | None,
        typer.Option(
            metavar="REF",
            envvar=BASELINE_REF_ENV,
            help="The baseline for --bump; default: as verify-history chooses it.",
        ),
    ] = None,
) -> None:
    """Write schema version, digest and counters into CRD files."""
    chosen = options.policy_from(policy)
    version_key = chosen.annotation(SCHEMA_VERSION)
    digest_key = chosen.annotation(SCHEMA_DIGEST)
    counters = options.counter_options(counter, chosen)
    files = crd_files(directory, max_bytes)
    bump_command = f"upgrade-guard stamp {shlex.quote(directory)} --bump"
    if bump and schema_version is not None:
        raise options.UsageProblem("give --bump or --schema-version, not both")
    if bump:
        wanted_version = _bumped(directory, baseline_ref, files, chosen, max_bytes)
    elif schema_version is not None:
        wanted_version = options.canonical_option("--schema-version", schema_version)
    else:
        stamped = {stamped_number(crd, version_key) for f in files for crd in f.crds.values()}
        only = stamped.pop() if len(stamped) == 1 else None
        if only is None and check:
            _report_unversioned(files, version_key, bump_command)
        if only is None:
            raise options.UsageProblem(
                f"{directory}: the CRDs do not all carry one {version_key}; run"
                f" `{bump_command}` (the version verify-history expects) or give"
                " --schema-version N"
            )
        wanted_version = only
    changed = 0
    stale_digest = False
    for crd_file in files:
        try:
            wanted = {
                name: {
                    version_key: str(wanted_version),
                    digest_key: digest.spec_digest(crd.spec),
                    **counters,
                }
                for name, crd in crd_file.crds.items()
            }
            # Webhook configurations carry the counters given, not the schema's.
            wanted.update((key, dict(counters)) for key in crd_file.webhooks if counters)
            result = stamper.stamp_text(
                crd_file.text, wanted, str(crd_file.path), template=crd_file.template
            )
        except (stamper.StampError, digest.DigestError) as error:
            raise LoadError(str(error)) from None
        if result == crd_file.text:
            continue
        changed += 1
        if check:
            before = stamper.read_annotations(crd_file.text, template=crd_file.template)
            for name, values in sorted(wanted.items()):
                stale = [k for k, v in values.items() if before.get(name, {}).get(k) != v]
                stale_digest = stale_digest or digest_key in stale
                if stale:
                    what = name if " " in name else f"CRD {name}"
                    typer.echo(f"{crd_file.path}: {what}: would set {', '.join(stale)}")
        else:
            stamper.write_file(crd_file.path, result)
    total = sum(len(f.crds) for f in files)
    webhooks = sum(len(f.webhooks) for f in files) if counters else 0
    also = f" and {webhooks} webhook configurations" if webhooks else ""
    summary = f"{total} CRDs{also} in {len(files)} files, schema version {wanted_version}"
    if not check:
        typer.echo(f"upgrade-guard: stamped {summary}; {changed} files changed")
    elif changed:
        fix = bump_command if stale_digest else f"upgrade-guard stamp {shlex.quote(directory)}"
        typer.echo(
            f"upgrade-guard: {changed} of {len(files)} files are not stamped as"
            f" they would be ({summary}); run `{fix}`"
        )
        raise typer.Exit(int(ExitCode.REFUSED))
    else:
        typer.echo(f"upgrade-guard: stamped as it would be: {summary}")
