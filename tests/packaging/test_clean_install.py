"""upgrade-guard as its users get it, nothing from the development extras: the wheel built
here and installed into a fresh virtual environment with its runtime dependencies only (pip
resolves them from the package index, as `pip install upgrade-guard` does), and the image
tools/image/build.sh built (the hash-pinned set), run under bwrap as tests/cluster run it.
Each runs every command's help, the example diff and every command given an option it lacks;
the image its default command; the virtual environment `helm guard --help`, the plugin
installed into the real helm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import prerequisites
from testenv import find_binaries
from testenv.podspec import entrypoint, identity
from testenv.sandbox import Image, Mount, bwrap_argv
from upgrade_guard.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "chart-snippets" / "example-operator"
# pip's own settings (index, certificates, proxy) are kept; nothing of the test's Python.
PIP_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
EVERY_COMMAND = [[], *([name] for name in COMMANDS)]


@dataclass(frozen=True)
class Install:
    """How to run the installed ``upgrade-guard``: ``command`` before its arguments, with
    ``env``, and where it sees the example chart's files."""

    command: list[str]
    env: dict[str, str]
    example: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.command, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its runtime dependencies only. The
    wheel is built from a copy of what the Dockerfile copies, as tools/image/build.sh does."""
    work = tmp_path_factory.mktemp("clean-install")
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    ignored = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO / "hook", source / "hook", ignore=ignored)

    def pip(python: Path, *args: str) -> None:
        done = subprocess.run(
            [str(python), "-m", "pip", "--quiet", *args],
            env=PIP_ENV,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    pip(Path(sys.executable), "wheel", "--no-deps", "--wheel-dir", str(work / "dist"), str(source))
    environment = work / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    pip(environment / "bin" / "python", "install", *map(str, (work / "dist").glob("*.whl")))
    return environment / "bin"


def in_image(image: Image, argv: list[str]) -> list[str]:
    """The bwrap command line that runs argv in the image as a container of a Pod that sets
    no user, the example mounted read-only at /example."""
    uid, gid = identity({}, {"name": "guard"}, image)
    return bwrap_argv(
        image,
        argv,
        [Mount(EXAMPLE, "/example", True)],
        uid=uid,
        gid=gid,
        hostname="guard",
        working_dir=image.working_dir,
        read_only_root=True,
    )


@pytest.fixture(scope="module", params=["venv", "image"])
def install(request: pytest.FixtureRequest) -> Iterator[Install]:
    if request.param == "venv":
        bin_dir = request.getfixturevalue("clean_venv")
        home = request.getfixturevalue("tmp_path_factory").mktemp("home")
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
        yield Install([str(bin_dir / "upgrade-guard")], env, str(EXAMPLE))
    else:
        image = prerequisites.guard_image()
        yield Install(in_image(image, image.entrypoint), {**image.env, "HOME": "/"}, "/example")


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=lambda c: " ".join(c) or "upgrade-guard")
def test_every_commands_help(install: Install, command: list[str]) -> None:
    done = install.run(*command, "--help")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(f"Usage: upgrade-guard {' '.join(command)}".rstrip())


def test_the_example_diff_is_refused_and_excuses_its_declared_break(install: Install) -> None:
    crds, policy = f"{install.example}/crds", f"{install.example}/policy.yaml"
    done = install.run(
        "diff", f"{crds}/1.0.0", f"{crds}/2.0.0", "--policy", policy, "--output", "json"
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    excused = [(f["code"], f["path"]) for f in report["findings"] if f["excused"]]
    assert (report["verdict"], excused) == ("unsafe", [("UG201", "spec.legacyPath")])


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=lambda c: " ".join(c) or "upgrade-guard")
def test_an_option_a_command_lacks_is_bad_input(install: Install, command: list[str]) -> None:
    done = install.run(*command, "--no-such-option")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--no-such-option" in done.stderr and "Traceback" not in done.stderr


def test_the_images_default_command_prints_the_usage() -> None:
    image = prerequisites.guard_image()
    command, args = entrypoint({"name": "guard"}, image)  # what a container that sets neither runs
    assert args == ["--help"]
    done = subprocess.run(
        in_image(image, [*command, *args]),
        env={**image.env, "HOME": "/"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("Usage: upgrade-guard [OPTIONS] COMMAND [ARGS]...")
    assert all(f"\n  {name} " in done.stdout for name in COMMANDS), done.stdout


def test_helm_guard_help_runs_the_clean_install(clean_venv: Path, tmp_path: Path) -> None:
    """helm-guard/ installed with `helm plugin install` into a fresh helm home (Helm 4.1.4
    installs into $HELM_DATA_HOME/plugins whatever HELM_PLUGINS says), the clean install first
    on PATH: `helm guard --help` is `upgrade-guard helm --help`."""
    helm = find_binaries().helm
    if not os.access(helm, os.X_OK):
        prerequisites.unavailable(f"no helm at {helm}: run tools/kube-testenv/build.sh")
    env = {"PATH": f"{clean_venv}:/usr/bin:/bin", "HOME": str(tmp_path)}
    for variable in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[variable] = str(tmp_path / variable.lower())

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(helm), *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    installed = run("plugin", "install", str(REPO / "helm-guard"))
    assert installed.returncode == 0, installed.stderr
    done = run("guard", "--help")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("Usage: upgrade-guard helm [OPTIONS] {OPERATION}")
    bad = run("guard", "--no-such-option")
    assert bad.returncode == 2, bad.stdout + bad.stderr
