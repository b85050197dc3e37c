"""The command line: the typer app and its commands, one module each under ``commands/``."""

from __future__ import annotations

import typer

from upgrade_guard.commands import diff, rules, stamp, verify_history

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Refuse Kubernetes operator upgrades that would hurt objects already stored.",
)
app.command(name="diff")(diff.diff)
app.command(name="rules")(rules.list_rules)
app.command(name="explain")(rules.explain)
app.command(name="stamp")(stamp.stamp)
app.command(name="verify-history")(verify_history.verify_history_command)


def main() -> None:
    app()
