"""The Helm plugin reads the guard Job's arguments as the hook's inputs, its files moved to
a directory of its own: no command line is parsed a second time."""

from __future__ import annotations

from pathlib import Path

import pytest

from upgrade_guard.commands.helm_plugin import _hook_inputs
from upgrade_guard.commands.hook import Inputs
from upgrade_guard.load.documents import LoadError
from upgrade_guard.load.helm_output import GuardJob

MOUNT = "/etc/upgrade-guard"
FILES = {"crds.json.gz": b"\x1f\x8b", "images.yaml": b"images: {}\n"}


def _job(*args: str) -> GuardJob:
    return GuardJob(args, MOUNT, FILES)


def test_the_jobs_options_become_the_hooks_inputs_with_its_files_moved(tmp_path: Path) -> None:
    job = _job(
        "--phase=pre-upgrade", "--release=rel", "--namespace=ns", "--revision=3",
        f"--crds={MOUNT}/crds.json.gz", f"--image-table={MOUNT}/images.yaml",
        "--controller-image=image=example/op:2.0.0", "--controller-image=webhook.image=w:2",
        "--counter=upgrade-guard.io/controller-state-version=3", "--timeout=60", "--fail-open",
        "--chart-version=2.0.0", '--accept={"chart":"2.0.0","code":"UG201"}',
    )  # fmt: skip
    given = _hook_inputs(job, tmp_path)
    assert given == Inputs(
        crds=f"{tmp_path}/crds.json.gz",
        image_table=f"{tmp_path}/images.yaml",
        controller_image=("image=example/op:2.0.0", "webhook.image=w:2"),
        counter=("upgrade-guard.io/controller-state-version=3",),
        chart_version="2.0.0",
        accept=('{"chart":"2.0.0","code":"UG201"}',),
    )
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == FILES


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("--evidence-limits=3", "not an option this plugin reads"),  # a newer library's
        ("--crds", "not an option this plugin reads"),  # an option without its value
        ("--max-bytes=many", "--max-bytes is not a number"),
    ],
)
def test_an_argument_it_cannot_read_is_bad_input_naming_it(
    tmp_path: Path, arg: str, message: str
) -> None:
    with pytest.raises(LoadError, match=message):
        _hook_inputs(_job("--release=rel", arg), tmp_path)


def test_an_option_given_twice_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="--policy given twice"):
        _hook_inputs(_job("--policy=/a", "--policy=/b"), tmp_path)
