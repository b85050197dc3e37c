"""The layer contracts (pyproject.toml, [tool.importlinter]) hold, and cover every part of
upgrade_guard: a new package or module has to take its place among the layers."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hook" / "upgrade_guard"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def test_the_contracts_hold() -> None:
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_part_of_the_package_has_its_layer() -> None:
    parts = {
        path.stem if path.is_file() else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.stem not in ("__init__", "__main__"))
        or (path / "__init__.py").is_file()
    }
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    assert isinstance(layers, list)
    layered = {
        name.strip().removeprefix("upgrade_guard.") for layer in layers for name in layer.split("|")
    }
    assert layered == parts


# Which parts may import each third-party package the forbidden contracts name.
ONLY = {
    "kubernetes": {"cluster"},
    "urllib3": {"cluster"},
    "yaml": {"load", "write"},
    "ryml": {"load", "write"},
    "orjson": {"load", "write"},
    "cel_expr_python": {"apiserver"},
    "google": {"apiserver"},
    "jsonpatch": {"apiserver"},
    "typer": {"cli", "commands"},
    "rich": {"report"},
}


def test_each_third_party_package_is_kept_to_its_parts() -> None:
    parts = {
        name.strip().removeprefix("upgrade_guard.")
        for layer in next(c for c in _contracts() if c["type"] == "layers")["layers"]
        for name in layer.split("|")
    }
    kept: dict[str, set[str]] = {}
    for contract in _contracts():
        if contract["type"] == "forbidden":
            sources = {s.removeprefix("upgrade_guard.") for s in contract["source_modules"]}
            for package in contract["forbidden_modules"]:
                kept[package] = parts - sources
    assert kept == ONLY
