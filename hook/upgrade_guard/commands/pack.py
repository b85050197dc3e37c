"""`upgrade-guard pack CRD_DIR OUT`: the CRD bundle a chart ships to its hook (at chart build
time; `--check` in CI, like `stamp --check`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from upgrade_guard.commands import options
from upgrade_guard.findings import ExitCode
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError, load_documents
from upgrade_guard.write import bundle


@options.guarded
def pack(
    crd_dir: Annotated[str, typer.Argument(help="The chart's CRDs: a directory or a file.")],
    out: Annotated[Path, typer.Argument(help="The gzip bundle to write.")],
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 unless OUT is up to date.")
    ] = False,
    max_bytes: options.MaxBytesOption = DEFAULT_MAX_BYTES,
) -> None:
    """Pack CRDs for the hook: descriptions dropped, minified JSON, gzip; refuse a bundle
    too large for a Helm release."""
    crds = crds_from(load_documents(crd_dir, max_bytes))
    if not crds:
        raise LoadError(f"{crd_dir}: no CustomResourceDefinitions to pack")
    packed = bundle.pack(crds)
    problem = bundle.too_large(packed)
    if problem:
        options.fail(ExitCode.REFUSED, problem)
    summary = f"{len(crds)} CRDs, {len(packed) / bundle.KIB:.1f} KiB"
    if check:
        if not out.is_file() or out.read_bytes() != packed:
            options.fail(
                ExitCode.REFUSED,
                f"{out} is not the bundle of {crd_dir}: run `upgrade-guard pack {crd_dir} {out}`",
            )
        typer.echo(f"upgrade-guard: {out} is up to date ({summary})")
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(packed)
    except OSError as error:
        raise LoadError(f"{out}: cannot write: {error.strerror}") from None
    typer.echo(f"upgrade-guard: packed {summary} into {out}")
