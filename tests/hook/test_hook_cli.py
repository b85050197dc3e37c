"""The hook's input problems, before any cluster is asked: exit 2, one line naming the
file, and the same line in the termination log."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

UPGRADE_GUARD = str(Path(sys.executable).with_name("upgrade-guard"))


def hook(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    log = tmp_path / "termination-log"
    done = subprocess.run(
        [UPGRADE_GUARD, "hook", "--kubeconfig", str(tmp_path / "no-such-kubeconfig"),
         "--termination-log", str(log), *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done, log.read_text() if log.exists() else ""


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (gzip.compress(b'{"kind": "List", "items": [')[:-4], "the gzip stream is truncated"),
        (gzip.compress(b'{"kind": "List", "items": [}'), "crds.json.gz"),
        (gzip.compress(b'{"kind": "List", "items": []}'), "no CustomResourceDefinitions"),
    ],
    ids=["truncated", "not JSON", "no CRDs"],
)
def test_a_malformed_bundle_exits_2(tmp_path: Path, content: bytes, problem: str) -> None:
    bundle = tmp_path / "crds.json.gz"
    bundle.write_bytes(content)
    done, log = hook(tmp_path, "--crds", str(bundle))
    assert done.returncode == 2, done.stderr
    assert problem in done.stderr and "Traceback" not in done.stderr
    assert log.startswith("upgrade-guard BAD INPUT (exit 2)") and problem in log


def test_the_image_options_go_together(tmp_path: Path) -> None:
    done, _ = hook(tmp_path, "--crds", str(tmp_path), "--controller-image", "op:1")
    assert done.returncode == 2


def test_an_unloadable_kubeconfig_is_exit_3(tmp_path: Path) -> None:
    crds = Path(__file__).parents[2] / "chart-snippets" / "example-operator" / "crds" / "2.0.0"
    done, log = hook(tmp_path, "--crds", str(crds))
    assert done.returncode == 3, done.stderr
    assert "cannot load cluster configuration" in done.stderr
    assert log.startswith("upgrade-guard CANNOT DECIDE (exit 3)")


@pytest.mark.parametrize(("severity", "exit_code"), [("error", 1), ("warning", 3)])
def test_the_policy_sets_the_hook_checks_severity(
    tmp_path: Path, severity: str, exit_code: int
) -> None:
    """A stale image refuses by default (exit 1, even where the cluster cannot be read: here
    there is none, and the report says what was checked); the policy can make it a warning,
    and then a cluster that cannot be read is exit 3."""
    crds = Path(__file__).parents[2] / "chart-snippets" / "example-operator" / "crds" / "2.0.0"
    table = tmp_path / "images.yaml"
    table.write_text('images: {"1.0.0": {controller-state-version: 2}}\n')
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"rules: {{image-mismatch: {severity}}}\n")
    done, _ = hook(tmp_path, "--crds", str(crds), "--counter", "controller-state-version=3",
                   "--controller-image", "op:1.0.0", "--image-table", str(table),
                   "--policy", str(policy))  # fmt: skip
    assert done.returncode == exit_code, done.stdout + done.stderr
    if severity == "error":
        assert "UG602" in done.stdout
        assert "only the chart and its images were checked: cannot load cluster" in (done.stdout), (
            done.stdout
        )


def test_several_controller_images_each_its_slot(tmp_path: Path) -> None:
    """Every slot's image is checked, with or without a cluster: the stale webhook refuses
    (exit 1) naming its slot and the command that pins the paired tag; a slot given twice is
    bad input."""
    crds = Path(__file__).parents[2] / "chart-snippets" / "example-operator" / "crds" / "2.0.0"
    table = tmp_path / "images.yaml"
    table.write_text(
        'images: {"1.0.0": {controller-state-version: 2}, "2.0.0": {controller-state-version: 3}}\n'
    )
    common = ("--crds", str(crds), "--counter", "controller-state-version=3",
              "--image-table", str(table))  # fmt: skip
    done, log = hook(tmp_path, *common, "--controller-image", "image=op:2.0.0",
                     "--controller-image", "webhook.image=hook:1.0.0")  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "UG602 image-mismatch (all CRDs): webhook.image: the values deploy hook:1.0.0"
        in done.stdout
    )
    assert "--set webhook.image.tag=2.0.0" in done.stdout
    assert "error UG602 image-mismatch (all CRDs): webhook.image" in log
    twice, _ = hook(tmp_path, *common, "--controller-image", "op:2.0.0",
                    "--controller-image", "image=op:1.0.0")  # fmt: skip
    assert twice.returncode == 2 and "each slot once" in twice.stderr, twice.stderr


def test_a_finding_about_the_crds_as_a_whole_is_accepted_without_a_crd(tmp_path: Path) -> None:
    """A stale image is about the release, not one CRD: its accept entry names no CRD, and
    given back for this chart version it lets the pairing through (the hook then goes on to
    the cluster: here none, exit 3); for another chart version it accepts nothing."""
    table = tmp_path / "images.yaml"
    table.write_text('images: {"1.0.0": {controller-state-version: 2}}\n')
    common = ("--crds", str(EXAMPLE_CRDS), "--counter", "controller-state-version=3",
              "--controller-image", "op:1.0.0", "--image-table", str(table))  # fmt: skip
    done, _ = hook(tmp_path, *common, "--chart-version", "2.0.0")
    assert done.returncode == 1, done.stdout + done.stderr
    (entry,) = [
        line.split("accept: ")[1] for line in done.stdout.splitlines() if "accept: {" in line
    ]
    assert entry.startswith('{"chart":"2.0.0","code":"UG602"') and '"crd"' not in entry, entry
    accepted, _ = hook(tmp_path, *common, "--chart-version", "2.0.0", "--accept", entry)
    assert accepted.returncode == 3, accepted.stdout + accepted.stderr
    stale, _ = hook(tmp_path, *common, "--chart-version", "2.0.1", "--accept", entry)
    assert stale.returncode == 1 and "error UG602" in stale.stdout, stale.stdout + stale.stderr


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        (("--accept", "{not json", "--chart-version", "1.0.0"), "not JSON"),
        (("--accept", '{"chart": "1.0.0", "crd": "w.x"}', "--chart-version", "1.0.0"),
         "expected an object with chart and code"),
        (("--accept", '{"chart": "1.0.0", "code": "UG201", "crd": "w.x", "why": "y"}',
          "--chart-version", "1.0.0"), "unknown keys: why"),
        (("--accept", '{"chart": "1.0.0", "code": "UG201", "crd": "w.x"}'),
         "needs --chart-version"),
    ],
    ids=["not JSON", "no code", "unknown key", "no chart version"],
)  # fmt: skip
def test_a_malformed_acceptance_exits_2(
    tmp_path: Path, given: tuple[str, ...], problem: str
) -> None:
    crds = Path(__file__).parents[2] / "chart-snippets" / "example-operator" / "crds" / "2.0.0"
    done, log = hook(tmp_path, "--crds", str(crds), *given)
    assert done.returncode == 2, done.stdout + done.stderr
    assert problem in done.stderr and "Traceback" not in done.stderr
    assert log.startswith("upgrade-guard BAD INPUT (exit 2)")


EXAMPLE_CRDS = Path(__file__).parents[2] / "chart-snippets" / "example-operator" / "crds" / "2.0.0"


@pytest.mark.parametrize(
    ("rendered", "exit_code", "problem"),
    [
        ("restores.example.io\n", 2, "the chart renders restores.example.io, which the bundle"),
        ("backups.example.io\n", 3, "cannot load cluster configuration"),  # on to the cluster
        ("", 3, "cannot load cluster configuration"),  # renders none: judges none
    ],
    ids=["rendered, not bundled", "rendered and bundled", "renders none"],
)
def test_the_bundle_is_filtered_to_the_crds_the_release_renders(
    tmp_path: Path, rendered: str, exit_code: int, problem: str
) -> None:
    """Without a Helm release record (Argo CD), the bundle holds every CRD the chart may
    apply and the hook judges those this release renders; a rendered CRD the bundle lacks is
    a stale bundle."""
    names = tmp_path / "rendered-crds.txt"
    names.write_text(rendered)
    done, _ = hook(tmp_path, "--crds", str(EXAMPLE_CRDS), "--rendered-crds", str(names))
    assert done.returncode == exit_code, done.stderr
    assert problem in done.stderr


@pytest.mark.parametrize(
    ("bundled", "option", "listing", "exit_code"),
    [
        (True, "--rendered-crds", "", 3),  # a value switches the CRDs off: judges none
        (False, "--rendered-crds", "", 2),  # a bundle of none would pass the same way
        (True, "--crd-names", "backups.example.io\n", 3),
        (True, "--crd-names", "", 2),  # the hook may read no CRD
    ],
    ids=["renders none", "bundles none", "lists one", "lists none"],
)
def test_a_bundle_or_listing_of_no_crd_exits_2(
    tmp_path: Path, bundled: bool, option: str, listing: str, exit_code: int
) -> None:
    """Without a release record (Argo CD) the hook must not pass judging no CRD because its
    inputs hold none: only this release's rendering may leave none to judge."""
    bundle = tmp_path / "crds.json.gz"
    bundle.write_bytes(gzip.compress(b'{"kind": "List", "items": []}'))
    names = tmp_path / "names.txt"
    names.write_text(listing)
    crds = str(EXAMPLE_CRDS if bundled else bundle)
    done, log = hook(tmp_path, "--crds", crds, option, str(names))
    assert done.returncode == exit_code, done.stderr
    if exit_code == 2:
        path = str(names if bundled else bundle)
        assert path in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert log.startswith("upgrade-guard BAD INPUT (exit 2)") and path in log


def test_without_a_bundle_the_hook_needs_the_release(tmp_path: Path) -> None:
    done, _ = hook(tmp_path, "--namespace", "ns")
    assert done.returncode == 2 and "give --crds, or --release" in done.stderr
