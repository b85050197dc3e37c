"""The command line: the typer app and its commands, one module each under ``commands/``.

A command's module is imported only when that command runs (or help lists it): importing
them all would load every rule, reader and reporter before ``--version`` could answer."""

from __future__ import annotations

import gc
import importlib
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from upgrade_guard import __version__

# name: (module under commands/, its function)
COMMANDS: dict[str, tuple[str, str]] = {
    "diff": ("diff", "diff"),
    "rules": ("rule_docs", "list_rules"),
    "explain": ("rule_docs", "explain"),
    "stamp": ("stamp", "stamp"),
    "verify-history": ("verify_history", "verify_history_command"),
    "verify-lifecycle": ("verify_lifecycle", "verify_lifecycle_command"),
    "hook": ("hook", "hook"),
    "pack": ("pack", "pack"),
    "schema": ("published_schemas", "schema"),
    "helm": ("helm_guard", "helm_guard"),
}
# Commands that take another tool's arguments as they are (the Helm plugin's helm flags).
PASS_THROUGH = {"helm"}
SETTINGS: dict[str, Any] = dict(
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: rich's boxed help cuts long option names at 80 columns and shows
    # flags as <bool>.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def command(name: str) -> Any:
    """The click command for one command, built from its module's function."""
    module, function = COMMANDS[name]
    callback = getattr(importlib.import_module(f"upgrade_guard.commands.{module}"), function)
    single = typer.Typer(**SETTINGS)
    # click cuts a summary it derives to fit the column; one given whole is wrapped instead
    short_help = (callback.__doc__ or "").strip().split("\n\n")[0]
    settings = SETTINGS["context_settings"]
    if name in PASS_THROUGH:
        settings = {**settings, "ignore_unknown_options": True, "allow_extra_args": True}
    single.command(name=name, short_help=short_help, context_settings=settings)(callback)
    return typer.main.get_command(single)


class _Commands(TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return command(cmd_name) if cmd_name in COMMANDS else None


app = typer.Typer(
    cls=_Commands,
    no_args_is_help=True,
    help="Refuse Kubernetes operator upgrades that would hurt objects already stored.",
    **SETTINGS,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"upgrade-guard {__version__}")
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
    # read, and reference counting frees everything the tool lets go of.
    gc.disable()
    app()
