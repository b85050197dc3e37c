"""Reports: each renders a whole Outcome to a string. REPORTERS is the one list of formats;
``--output`` offers exactly its keys (Output)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Protocol

from upgrade_guard.findings import Outcome
from upgrade_guard.report import github, json_report, markdown, text
from upgrade_guard.report.terminal import PLAIN, Terminal

__all__ = ["PLAIN", "REPORTERS", "Output", "Reporter", "Terminal"]


class Reporter(Protocol):
    def __call__(self, outcome: Outcome, terminal: Terminal = PLAIN) -> str: ...


REPORTERS: dict[str, Reporter] = {
    "text": text.render,
    "json": json_report.render,
    "markdown": markdown.render,
    "github": github.render,
}
if TYPE_CHECKING:
    Output = str  # what a member of the enum below is
else:
    Output = enum.StrEnum("Output", [(name, name) for name in REPORTERS])
