"""Where a report is printed, the one thing a reporter may need besides the Outcome."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Terminal:
    """On a terminal, the text report is coloured and as wide as the terminal."""

    color: bool = False
    width: int = 80


PLAIN = Terminal()  # a pipe or a file: no colour, 80 columns
