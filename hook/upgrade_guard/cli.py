"""The command line: the typer app and its commands, one module each under ``commands/``."""

from __future__ import annotations

import gc
from importlib import metadata
from typing import Annotated

import typer

from upgrade_guard.commands import (
    diff,
    hook,
    pack,
    rules,
    stamp,
    verify_history,
    verify_lifecycle,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain click help: rich's boxed help cuts long option names at 80 columns and shows
    # flags as <bool>.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    help="Refuse Kubernetes operator upgrades that would hurt objects already stored.",
)
app.command(name="diff")(diff.diff)
app.command(name="rules")(rules.list_rules)
app.command(name="explain")(rules.explain)
app.command(name="stamp")(stamp.stamp)
app.command(name="verify-history")(verify_history.verify_history_command)
app.command(name="verify-lifecycle")(verify_lifecycle.verify_lifecycle_command)
app.command(name="hook")(hook.hook)
app.command(name="pack")(pack.pack)
for _command in app.registered_commands:
    # click cuts a summary it derives to fit the column; one given whole is wrapped instead
    _command.short_help = (_command.callback.__doc__ or "").strip().split("\n\n")[0]


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"upgrade-guard {metadata.version('upgrade-guard')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Refuse Kubernetes operator upgrades that would hurt objects already stored."""


def main() -> None:
    # One short-lived process that builds large acyclic trees (parsed CRDs, schemas, API
    # bodies): the cyclic collector would walk all of them again and again while they are
    # read (reading the provider-upjet-aws pair took 1.8x as long with it), and reference
    # counting frees everything the tool lets go of.
    gc.disable()
    app()
