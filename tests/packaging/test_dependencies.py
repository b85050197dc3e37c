"""Every module the package imports is the standard library's, its own, or a declared runtime
dependency's; and every declared dependency is imported. The development extras bring more
(click, through mkdocs and import-linter), so an undeclared import passes every other test
here and fails only `pip install upgrade-guard`: tests/packaging/test_clean_install.py."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "hook" / "upgrade_guard"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {canonical(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]) for r in project["dependencies"]}


def imported() -> dict[str, set[str]]:
    """Top-level module -> the package's files importing it (absolute imports, anywhere)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def third_party() -> dict[str, set[str]]:
    """Each third-party module imported -> the installed distributions providing it."""
    providers = metadata.packages_distributions()
    return {
        module: {canonical(d) for d in providers.get(module, [])}
        for module in imported()
        if module not in sys.stdlib_module_names and module != "upgrade_guard"
    }


def test_every_imported_module_comes_from_a_declared_runtime_dependency() -> None:
    runtime = declared()
    undeclared = {
        module: (sorted(providers) or "not installed", sorted(imported()[module]))
        for module, providers in third_party().items()
        if not providers & runtime
    }
    assert not undeclared, f"add to [project] dependencies in pyproject.toml: {undeclared}"


def test_every_declared_runtime_dependency_is_imported() -> None:
    provided = set().union(*third_party().values())
    assert declared() - provided == set()
