"""Reports: each renders a whole Outcome to a string. REPORTERS is the one list of formats;
``--output`` offers exactly its keys (Output)."""

from __future__ import annotations

import enum
import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from upgrade_guard.findings import Outcome
from upgrade_guard.report.terminal import PLAIN, Terminal

__all__ = ["PLAIN", "REPORTERS", "Output", "Reporter", "Terminal"]


class Reporter(Protocol):
    def __call__(self, outcome: Outcome, terminal: Terminal = PLAIN) -> str: ...


# format: its module under report/
_MODULES = {"text": "text", "json": "json_report", "markdown": "markdown", "github": "github"}


class _Reporters(Mapping[str, Reporter]):
    """Each format's ``render``, its module imported when the format is asked for (the text
    report's rich is large, and a run prints one format)."""

    def __getitem__(self, name: str) -> Reporter:
        module = importlib.import_module(f"upgrade_guard.report.{_MODULES[name]}")
        render: Reporter = module.render
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


REPORTERS: Mapping[str, Reporter] = _Reporters()
if TYPE_CHECKING:
    Output = str  # what a member of the enum below is
else:
    Output = enum.StrEnum("Output", [(name, name) for name in REPORTERS])
