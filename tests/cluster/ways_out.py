"""Reading a refusal's printed ways out as a person does, to type them: the command in
backticks on a line of the report, with CHART, ``[your flags]`` and the accept entries
filled in as the report says."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_COMMAND = re.compile(r"`([^`]+)`")


def printed(log: str, line_starts: str, under: str | None = None) -> str:
    """The first command on the first report line starting with ``line_starts`` (after the
    line starting with ``under``, a refusal's own line, when given)."""
    lines = log.splitlines()
    if under is not None:  # the entry's own lines: indented, up to the next entry
        start = next(i for i, line in enumerate(lines) if line.startswith(under)) + 1
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), None)
        lines = lines[start:end]
    line = next(line for line in lines if line.startswith(line_starts))
    found = _COMMAND.search(line)
    assert found, f"no command on {line!r}"
    return found.group(1)


def entries(log: str) -> list[str]:
    """Every refusal's accept: entry."""
    return [line.split("accept: ", 1)[1].split(" (", 1)[0] for line in log.splitlines()
            if line.startswith("  accept: ")]  # fmt: skip


def typed(
    command: str, chart: str = "", flags: Sequence[str] = (), accepted: Sequence[str] = ()
) -> str:
    """``command`` as the person types it: their chart, the flags they gave, the entries
    they accept."""
    words = command.replace("CHART", shlex.quote(chart)).replace("[your flags]", shlex.join(flags))
    words = words.replace("[ENTRY,...]", "[" + ",".join(accepted) + "]")
    return words.replace(
        "--accept 'ENTRY'", " ".join(f"--accept {shlex.quote(e)}" for e in accepted)
    )
