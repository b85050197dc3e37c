"""The layer contracts, checked from the source: a pure core, thin edges."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hook" / "upgrade_guard"
MODULES = sorted(PACKAGE.rglob("*.py"))

# Which top-level packages each part of upgrade_guard may import besides the standard library
# and itself; and which parts of upgrade_guard it may import.
CORE = {"findings", "schema", "crd", "policy", "engine", "rules", "counters", "lifecycle"}
ALLOWED_THIRD_PARTY = {
    "cluster": {"kubernetes", "urllib3"},
    "load": {"yaml"},
    "report": {"rich"},
    "cli": {"typer"},
    "commands": {"typer"},
}


def _part(module: Path) -> str:
    relative = module.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(), str(module))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module", MODULES, ids=lambda m: str(m.relative_to(PACKAGE)))
def test_module_imports_respect_its_layer(module: Path) -> None:
    part = _part(module)
    allowed = ALLOWED_THIRD_PARTY.get(part, set())
    for name in _imports(module):
        top = name.split(".")[0]
        if top == "upgrade_guard":
            inner = name.split(".")[1] if "." in name else ""
            if part in CORE:
                assert inner in CORE, f"{module.name}: the pure core imports upgrade_guard.{inner}"
            continue
        if top in ("kubernetes", "typer", "rich", "yaml", "urllib3"):
            assert top in allowed, f"{module.name} ({part}) may not import {top}"


def test_only_the_cluster_layer_imports_the_kubernetes_client() -> None:
    importers = {m for m in MODULES if any(n.split(".")[0] == "kubernetes" for n in _imports(m))}
    assert all(_part(m) == "cluster" for m in importers)
