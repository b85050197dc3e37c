"""The Dockerfile and tools/image/build.sh describe one image: the same pinned requirements,
installed by the same pip commands, with the same user, entrypoint and environment."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
BUILD = REPO / "tools" / "image" / "build.sh"
REQUIREMENTS = REPO / "requirements" / "image.txt"
IN_CI = os.environ.get("CI", "").lower() == "true"


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def shell_assignment(name: str) -> str:
    """The value of a single-quoted assignment ``name='...'`` in build.sh."""
    match = re.search(rf"^{name}='([^']*)'", BUILD.read_text(), flags=re.MULTILINE)
    assert match, f"{name}= not found in {BUILD}"
    return match.group(1)


def pip_installs(commands: list[str]) -> list[list[str]]:
    return [shlex.split(c) for c in commands if c.startswith("pip install ")]


def pinned() -> dict[str, str]:
    """name -> version of every requirement in requirements/image.txt (each hash-pinned)."""
    text = re.sub(r"\\\n", " ", REQUIREMENTS.read_text())
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement, *options = line.split()
        name, version = requirement.split("==")
        assert options and all(o.startswith("--hash=sha256:") for o in options), line
        pins[canonical(name)] = version
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_both_stages_use_one_exactly_pinned_slim_python_base() -> None:
    bases = [args.split()[0] for instr, args in dockerfile_instructions() if instr == "FROM"]
    assert len(bases) == 2 and len(set(bases)) == 1, bases
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", bases[0])
    # The script's Debian suite carries the same Python minor version (bookworm: 3.11).
    assert re.search(r"^suite=bookworm$", BUILD.read_text(), flags=re.MULTILINE)


def test_dockerfile_and_build_script_run_the_same_pip_installs() -> None:
    runs = [args for instr, args in dockerfile_instructions() if instr == "RUN"]
    docker = []
    for run in runs:
        run = re.sub(r"^--mount=\S+\s+", "", run)
        docker += [c.strip() for c in run.split("&&")]
    script = shell_assignment("install_commands").splitlines()
    assert pip_installs(docker) == pip_installs(script)
    assert pip_installs(script)[0][-2:] == ["-r", "/requirements/image.txt"]
    assert "--require-hashes" in pip_installs(script)[0]


def test_dockerfile_and_build_script_set_the_same_user_and_entrypoint() -> None:
    instructions = dockerfile_instructions()
    user = [args for instr, args in instructions if instr == "USER"][-1]
    entrypoint = json.loads([args for instr, args in instructions if instr == "ENTRYPOINT"][-1])
    text = BUILD.read_text()
    assert f"image_user={user}\n" in text
    assert entrypoint == ["upgrade-guard"]
    assert "--config.entrypoint upgrade-guard " in text
    env = " ".join(args for instr, args in instructions if instr == "ENV")
    for setting in re.findall(r"\b[A-Z_]+=\S+", env):
        assert setting in text, setting


def test_requirements_pin_every_runtime_dependency_with_hashes() -> None:
    pins = pinned()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        name = canonical(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0])
        assert name in pins, f"{name} is not in {REQUIREMENTS.name}: run tools/image/lock.sh"


def built_image() -> Path | None:
    result = subprocess.run([str(BUILD), "--print-dir"], capture_output=True, text=True)
    if result.returncode != 0:
        if IN_CI:
            pytest.fail(f"CI=true: the image is not built; tools/test.sh runs {BUILD}")
        pytest.skip(f"the image is not built for this checkout; run {BUILD.relative_to(REPO)}")
    return Path(result.stdout.strip())


def test_built_image_holds_exactly_the_pinned_set() -> None:
    image = built_image()
    assert image is not None
    site = image / "bundle" / "rootfs" / "usr" / "local" / "lib" / "python3.11" / "dist-packages"
    installed = {}
    for info in site.glob("*.dist-info"):
        name, version = info.name.removesuffix(".dist-info").rsplit("-", 1)
        installed[canonical(name)] = version
    expected = {**pinned(), "upgrade-guard": installed.get("upgrade-guard", "?")}
    assert installed == expected
    config = json.loads((image / "bundle" / "config.json").read_text())
    assert config["process"]["args"] == ["upgrade-guard", "--help"]
    assert (config["process"]["user"]["uid"], config["process"]["user"]["gid"]) == (65532, 65532)
    assert (image / "upgrade-guard.oci.tar").stat().st_size > 0


def test_built_image_bytecode_is_checked_by_hash() -> None:
    """The image's layer keeps mtimes to the second: bytecode checked by mtime went stale, and
    the read-only root filesystem compiled those modules again on every run."""
    image = built_image()
    assert image is not None
    site = image / "bundle" / "rootfs" / "usr" / "local" / "lib" / "python3.11" / "dist-packages"
    compiled = list(site.rglob("*.cpython-311.pyc"))
    assert any(pyc.parts[-3] == "upgrade_guard" for pyc in compiled)
    by_mtime = [pyc for pyc in compiled if not int.from_bytes(pyc.read_bytes()[4:8], "little")]
    assert not by_mtime, by_mtime[:3]
