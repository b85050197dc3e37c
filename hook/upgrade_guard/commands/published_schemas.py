"""`upgrade-guard schema NAME`: the JSON Schemas of the formats the tool publishes."""

from __future__ import annotations

import enum
import json
from typing import Annotated

import typer

from upgrade_guard.policy import POLICY_SCHEMA
from upgrade_guard.report.report_schema import REPORT_SCHEMA


class Published(enum.StrEnum):
    policy = "policy"
    report = "report"


SCHEMAS = {Published.policy: POLICY_SCHEMA, Published.report: REPORT_SCHEMA}


def schema(
    name: Annotated[
        Published,
        typer.Argument(metavar="NAME", help="policy (the policy file) or report (--output json)."),
    ],
) -> None:
    """Print the JSON Schema of a published format: the policy file, or the JSON report."""
    typer.echo(json.dumps(SCHEMAS[name], indent=2))
