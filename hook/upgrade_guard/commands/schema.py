"""`upgrade-guard schema NAME`: the JSON Schemas of the formats the tool publishes."""

from __future__ import annotations

import enum
import json
from typing import Annotated

import typer

from upgrade_guard.report.report_schema import REPORT_SCHEMA


class Published(enum.StrEnum):
    report = "report"


def schema(
    name: Annotated[Published, typer.Argument(metavar="NAME", help="report: --output json.")],
) -> None:
    """Print the JSON Schema of a published format: report (--output json)."""
    typer.echo(json.dumps(REPORT_SCHEMA, indent=2))
