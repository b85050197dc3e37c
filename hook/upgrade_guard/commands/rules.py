"""`upgrade-guard rules` and `upgrade-guard explain CODE`: the rules and their documentation."""

from __future__ import annotations

from typing import Annotated

import typer

from upgrade_guard import rules as engine_rules
from upgrade_guard.commands import options
from upgrade_guard.counters import history
from upgrade_guard.findings import ExitCode


def list_rules() -> None:
    """List every rule (code, default severity, name, summary), then verify-history's checks."""
    for rule in engine_rules.ALL_RULES:
        typer.echo(f"{rule.code}  {rule.severity!s:<7}  {rule.name:<32} {rule.summary}")
    for check in history.CHECKS:
        typer.echo(f"{check.code}  {'error':<7}  {check.name:<32} verify-history: {check.summary}.")


def _history_check(code: str) -> history.Check | None:
    wanted = code.strip().lower()
    return next((c for c in history.CHECKS if wanted in (c.code.lower(), c.name)), None)


def explain(code: Annotated[str, typer.Argument(help="A rule code or name.")]) -> None:
    """Print a rule's documentation."""
    rule = engine_rules.lookup(code)
    if rule is not None:
        typer.echo(rule.doc.strip())
        return
    check = _history_check(code)
    if check is None:
        options.fail(ExitCode.BAD_INPUT, f"unknown rule {code!r} (see `upgrade-guard rules`)")
    typer.echo(f"{check.code} {check.name}\n\nWhat it flags: {check.summary} (verify-history).")
    typer.echo(f"\n{(history.__doc__ or '').strip()}")
