"""`upgrade-guard stamp DIR`: write the schema version, digest and counters into CRD files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.counters import digest
from upgrade_guard.counters.history import stamped_number
from upgrade_guard.crd import Crd
from upgrade_guard.findings import ExitCode
from upgrade_guard.load import stamp as stamping
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import (
    DEFAULT_MAX_BYTES,
    STDIN,
    LoadError,
    documents_of,
    read_inputs,
)
from upgrade_guard.policy import SCHEMA_DIGEST, SCHEMA_VERSION


@dataclass(frozen=True)
class CrdFile:
    path: Path
    text: str
    crds: dict[str, Crd]


def crd_files(argument: str, max_bytes: int) -> list[CrdFile]:
    """The files under argument that hold CRDs, with their text (stamping edits it in place)."""
    if argument == STDIN:
        raise options.UsageProblem("stamp edits files in place: give a file or directory, not -")
    found: list[CrdFile] = []
    for name, data in read_inputs(argument, max_bytes):
        crds = crds_from(documents_of(name, data))
        if not crds:
            continue
        try:
            found.append(CrdFile(Path(name), data.decode("utf-8"), crds))
        except UnicodeDecodeError as error:
            raise LoadError(f"{name}: stamp edits UTF-8 text only ({error.reason})") from None
    if not found:
        raise LoadError(f"{argument}: no CustomResourceDefinitions to stamp")
    return found


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
) -> None:
    """Write schema version, digest and counters into CRD files."""
    chosen = options.policy_from(policy)
    version_key = chosen.annotation(SCHEMA_VERSION)
    digest_key = chosen.annotation(SCHEMA_DIGEST)
    counters = options.counter_options(counter, chosen)
    files = crd_files(directory, max_bytes)
    if schema_version is not None:
        wanted_version = options.canonical_option("--schema-version", schema_version)
    else:
        stamped = {stamped_number(crd, version_key) for f in files for crd in f.crds.values()}
        only = stamped.pop() if len(stamped) == 1 else None
        if only is None:
            raise options.UsageProblem(
                f"{directory}: the CRDs do not all carry one {version_key}; give --schema-version"
                " (1 for a first adoption)"
            )
        wanted_version = only
    changed = 0
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
            result = stamping.stamp_text(crd_file.text, wanted, str(crd_file.path))
        except (stamping.StampError, digest.DigestError) as error:
            raise LoadError(str(error)) from None
        if result == crd_file.text:
            continue
        changed += 1
        if check:
            before = stamping.read_annotations(crd_file.text)
            for name, values in sorted(wanted.items()):
                stale = [k for k, v in values.items() if before.get(name, {}).get(k) != v]
                if stale:
                    typer.echo(f"{crd_file.path}: CRD {name}: would set {', '.join(stale)}")
        else:
            stamping.write_file(crd_file.path, result)
    total = sum(len(f.crds) for f in files)
    summary = f"{total} CRDs in {len(files)} files, schema version {wanted_version}"
    if not check:
        typer.echo(f"upgrade-guard: stamped {summary}; {changed} files changed")
    elif changed:
        typer.echo(
            f"upgrade-guard: {changed} of {len(files)} files are not stamped as"
            f" they would be ({summary}); run upgrade-guard stamp {directory}"
        )
        raise typer.Exit(int(ExitCode.REFUSED))
    else:
        typer.echo(f"upgrade-guard: stamped as it would be: {summary}")
