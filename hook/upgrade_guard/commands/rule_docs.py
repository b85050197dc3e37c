"""`upgrade-guard rules` and `upgrade-guard explain CODE`: the rules and their documentation."""

from __future__ import annotations

import enum
import json
from typing import Annotated

import typer

from upgrade_guard import rules as engine_rules
from upgrade_guard import topics
from upgrade_guard.commands import options
from upgrade_guard.findings import ExitCode
from upgrade_guard.rules.kinds import HistoryCheck, LifecycleRule, Rule


class ListFormat(enum.StrEnum):
    text = "text"
    json = "json"


def _command(rule: Rule) -> str:
    if isinstance(rule, HistoryCheck):
        return "verify-history"
    return "verify-lifecycle" if isinstance(rule, LifecycleRule) else "diff"


def _rule_table() -> list[dict[str, str]]:
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "severity": str(rule.severity),
            "command": _command(rule),
            "summary": rule.summary,
        }
        for rule in engine_rules.ALL_RULES
    ]


def list_rules(
    output: Annotated[ListFormat, typer.Option(metavar="FORMAT", help="text or json.")] = (
        ListFormat.text
    ),
) -> None:
    """List every rule, verify-history check and lifecycle rule: code, severity, name,
    summary."""
    table = _rule_table()
    if output is ListFormat.json:
        typer.echo(json.dumps({"rules": table}, indent=2))
        return
    for row in table:
        prefix = "" if row["command"] == "diff" else f"{row['command']}: "
        typer.echo(
            f"{row['code']}  {row['severity']:<7}  {row['name']:<32} {prefix}{row['summary']}"
        )


def explain(
    code: Annotated[
        str,
        typer.Argument(metavar="CODE", help="A rule code or name, or a topic: declared-breaks."),
    ],
) -> None:
    """Print a rule's documentation, or a topic's."""
    if code.strip().lower() in topics.TOPICS:
        typer.echo(topics.TOPICS[code.strip().lower()].strip())
        return
    rule = engine_rules.lookup(code)
    if rule is None:
        options.fail(
            ExitCode.BAD_INPUT,
            f"unknown rule or topic {code!r} (see `upgrade-guard rules`; topics:"
            f" {', '.join(topics.TOPICS)})",
        )
    typer.echo(rule.doc.strip())
