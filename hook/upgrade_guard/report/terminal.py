"""Where a report is printed, the one thing a reporter may need besides the Outcome."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Terminal:
    """On a terminal, the text report is coloured and as wide as the terminal; with
    ``witnesses`` (``--witnesses``) it shows each error's witness."""

    color: bool = False
    width: int = 80
    witnesses: bool = False


PLAIN = Terminal()  # a pipe or a file: no colour, 80 columns
