"""`upgrade-guard pack`: the bundle a chart carries to its hook, and `pack --check` in CI."""

from __future__ import annotations

import gzip
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from corpus import require_corpus
from crd_builders import crd, field_crd, obj, spec_schema, version


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "upgrade_guard", "pack", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write(directory: Path, body: dict[str, object]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "crd.yaml").write_text(yaml.safe_dump(body))
    return directory


def test_bundle_is_a_gzip_json_list_without_schema_documentation(tmp_path: Path) -> None:
    documented = {"type": "string", "description": "says what it is", "title": "Field"}
    schema = spec_schema(field=documented, description=obj(note={"type": "string"}))
    schema["description"] = "the root"
    crds = write(tmp_path / "crds", crd(version(schema=schema)))
    out = tmp_path / "bundle.json.gz"
    result = run(crds, out)
    assert result.returncode == 0, result.stderr
    assert "packed 1 CRDs" in result.stdout
    listing = json.loads(gzip.decompress(out.read_bytes()))
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    packed = listing["items"][0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "description" not in packed
    spec = packed["properties"]["spec"]["properties"]
    assert spec["field"] == {"type": "string"}
    assert "description" in spec  # a property named description is data and stays
    first = out.read_bytes()
    assert run(crds, out).returncode == 0 and out.read_bytes() == first  # reproducible


def test_check_passes_on_the_current_bundle_and_refuses_a_stale_one(tmp_path: Path) -> None:
    crds = write(tmp_path / "crds", field_crd({"type": "string"}))
    out = tmp_path / "bundle.json.gz"
    assert run(crds, out).returncode == 0
    current = run("--check", crds, out)
    assert current.returncode == 0 and "is up to date" in current.stdout

    write(crds, field_crd({"type": "integer"}))
    stale = run("--check", crds, out)
    assert stale.returncode == 1
    assert f"run `upgrade-guard pack {crds} {out}`" in stale.stderr
    missing = run("--check", crds, tmp_path / "none.json.gz")
    assert missing.returncode == 1


def test_a_directory_without_crds_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    result = run(tmp_path / "crds", tmp_path / "out.gz")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no CustomResourceDefinitions" in result.stderr


def test_an_out_that_cannot_be_written_is_bad_input_beside_one_that_can(tmp_path: Path) -> None:
    crds = write(tmp_path / "crds", field_crd({"type": "string"}))
    (tmp_path / "taken").mkdir()
    result = run(crds, tmp_path / "taken")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and f"{tmp_path / 'taken'}: cannot write" in result.stderr
    assert run(crds, tmp_path / "taken" / "bundle.json.gz").returncode == 0


def test_prometheus_operator_fits_and_a_set_too_large_is_refused_with_the_way_out(
    tmp_path: Path,
) -> None:
    prometheus = require_corpus() / "prometheus-operator" / "v0.90.0"
    fits = run(prometheus, tmp_path / "prometheus.json.gz")
    assert fits.returncode == 0, fits.stderr
    assert "packed 10 CRDs" in fits.stdout
    assert (tmp_path / "prometheus.json.gz").stat().st_size < 64 * 1024

    # Random enum values do not compress: about 400 KiB of bundle.
    values = [secrets.token_urlsafe(32) for _ in range(12_000)]
    big = write(tmp_path / "big", field_crd({"type": "string", "enum": values}))
    refused = run(big, tmp_path / "big.json.gz")
    assert refused.returncode == 1
    assert "over the 256 KiB a Helm release can carry" in refused.stderr
    assert "split the CRDs over several charts" in refused.stderr
    assert not (tmp_path / "big.json.gz").exists()


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(flag: str) -> None:
    result = run(flag)
    assert result.returncode == 0 and "--check" in result.stdout
