"""No two modules of upgrade_guard share a name: a name says what a module is wherever it is
imported (`hook_log`, not the report's `hook` beside the command's `hook`). A package counts
by its own name; ``__init__`` and ``__main__`` are not names of their own."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "hook" / "upgrade_guard"


def test_no_two_modules_share_a_name() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if path.stem in ("__init__", "__main__"):
            if path.stem == "__init__" and path.parent != PACKAGE:
                where[path.parent.name].append(str(relative.parent) + "/")
            continue
        where[path.stem].append(str(relative))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
