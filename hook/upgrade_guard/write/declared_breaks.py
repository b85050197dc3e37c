"""Write declared breaks into a policy file (``diff --declare-breaks``): every other byte of
the file stays as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from upgrade_guard.load.documents import LoadError
from upgrade_guard.load.libyaml_reader import describe
from upgrade_guard.load.policy_file import CONVENTIONAL_NAME, find_policy
from upgrade_guard.write.stamper import write_file


def _entries_text(entries: list[tuple[int, dict[str, Any]]], indent: str) -> str:
    lines: list[str] = []
    for count, entry in entries:
        if count > 1:
            lines.append(f"{indent}# {count} findings at this place")
        written = {key: value for key, value in entry.items() if key != "reason"}
        dumped = yaml.safe_dump([written], sort_keys=False, allow_unicode=True, width=1000)
        lines.extend(indent + line for line in dumped.splitlines())
        lines.append(f'{indent}  reason: ""')
    return "".join(line + "\n" for line in lines)


def append_declared_breaks(path: Path, entries: list[tuple[int, dict[str, Any]]]) -> None:
    """Add entries at the end of the policy file's declared-breaks (created when missing);
    every other byte of the file stays as it was."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise LoadError(f"{path}: {describe(error)}") from None
    if text and not text.endswith("\n"):
        text += "\n"
    value = None
    if isinstance(root, yaml.MappingNode):
        value = next((v for k, v in root.value if k.value == "declared-breaks"), None)
    elif root is not None:
        raise LoadError(f"{path}: a policy must be a mapping")
    if value is None:
        text += "declared-breaks:\n" + _entries_text(entries, "")
    elif isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
        last = value.value[-1]
        end = text.find("\n", last.end_mark.index - 1)
        end = len(text) if end < 0 else end + 1
        addition = _entries_text(entries, " " * value.start_mark.column)
        text = text[:end] + addition + text[end:]
    elif isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null"):
        line_end = text.find("\n", value.end_mark.index)
        start = value.start_mark.index
        text = text[:start].rstrip(" ") + "\n" + _entries_text(entries, "") + text[line_end + 1 :]
    else:
        raise LoadError(f"{path}: declared-breaks is not a block list; add the entries by hand")
    if path.exists():
        write_file(path, text)
    else:
        path.write_text(text, encoding="utf-8")


def policy_to_edit(path: str | None, start: Path) -> Path:
    """The policy file --policy names, else the one found by convention, else a new
    .upgrade-guard.yaml at the git root (or in start outside git)."""
    if path:
        return Path(path)
    found = find_policy(start)
    if found is not None:
        return Path(os.path.relpath(found, start))
    root = next((d for d in (start, *start.parents) if (d / ".git").exists()), start)
    return Path(os.path.relpath(root / CONVENTIONAL_NAME, start))
