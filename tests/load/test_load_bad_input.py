"""Bad input to the loader: always one line naming the file, never a traceback, bounded memory."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import LoadError, load_documents
from upgrade_guard.load.yaml_scalars import MAX_DEPTH

BILLION_LAUGHS = "\n".join(
    [
        'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *[f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)],
        "",
    ]
)

CASES: dict[str, tuple[bytes, str]] = {
    "malformed": (b"kind: A\nspec: [1, 2\nother: x\n", "line 3"),
    "bad-indentation": (b"a:\n  b: 1\n c: 2\n", "line 3"),
    "tab-indentation": (b"a:\n\tb: 1\n", "line 2"),
    "not-a-mapping": (b"- a\n- b\n", "a document must be a mapping, not a list"),
    "scalar-document": (b"just text\n", "a document must be a mapping, not a str"),
    "alias-cycle": (b"a: &a [*a]\n", "cycle"),
    "undefined-alias": (b"a: *nope\n", "line 1"),
    "billion-laughs": (BILLION_LAUGHS.encode(), "aliases expand to more than"),
    "deep-flow": (b"a: " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nest"),
    "deep-block": (
        b"".join(b" " * i + b"k:\n" for i in range(MAX_DEPTH + 5)) + b" " * 300 + b"k: v\n",
        f"nested deeper than {MAX_DEPTH} levels",
    ),
    "non-utf8": (b"kind: A\nname: caf\xe9\n", "line 2: not UTF-8 text"),
    "nul-byte": (b"a: b\x00c\n", "control characters are not allowed"),
    "infinity": (b"a: .inf\n", "cannot be represented in JSON"),
    "null-key": (b"~: a\n", "null mapping key"),
    "bad-tag-value": (b"a: !!int abc\n", "cannot decode"),
    "escaped-slash": (b'a: "x\\/"\n', "line 1, column 4: found unknown escape character"),
    "lone-surrogate": (b'a: "\\ud800"\n', "line 1, column 7: found invalid Unicode character"),
}


def _load(path: Path | str, max_bytes: int | None = None) -> None:
    documents = (
        load_documents(str(path)) if max_bytes is None else load_documents(str(path), max_bytes)
    )
    crds_from(documents)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_yaml_is_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    data, expected = CASES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(LoadError) as raised:
            _load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(raised.value)
    assert message.startswith(str(path)), message
    assert expected in message, message
    assert "\n" not in message
    assert peak < 64 * 1024 * 1024, f"{peak} bytes for {len(data)} bytes of input"


def test_size_limit_for_a_file_and_for_a_directory_in_all(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_bytes(b"a: 1\n" * 100)
    (tmp_path / "b.yaml").write_bytes(b"b: 1\n" * 100)
    with pytest.raises(LoadError, match=r"a\.yaml: input larger than the limit of 100 bytes"):
        _load(tmp_path / "a.yaml", max_bytes=100)
    with pytest.raises(
        LoadError, match=r"b\.yaml: input larger than the limit of 700 bytes in all"
    ):
        _load(tmp_path, max_bytes=700)
    _load(tmp_path, max_bytes=1000)


def test_size_limit_on_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"a: 1\n" * 1000))
    monkeypatch.setattr(sys, "stdin", stdin)
    with pytest.raises(LoadError, match=r"^<stdin>: input larger than the limit of 100 bytes$"):
        _load("-", max_bytes=100)


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"missing\.yaml: no such file or directory$"):
        _load(tmp_path / "missing.yaml")


def test_directory_without_yaml(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(LoadError, match=r"no \.yaml, \.yml, \.json or \.gz files"):
        _load(tmp_path)


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_bytes(b"a: 1\n")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):  # root reads anyway: take a file whose read fails
            path = Path("/proc/self/mem")
            if not path.exists():
                pytest.skip("running as root without /proc/self/mem to fail a read")
        with pytest.raises(LoadError, match=r"cannot read: ") as raised:
            _load(path)
        assert str(raised.value).startswith(str(path))
        assert "\n" not in str(raised.value)
    finally:
        (tmp_path / "secret.yaml").chmod(0o600)


def test_command_line_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(BILLION_LAUGHS.encode())
    good = tmp_path / "good.yaml"
    good.write_bytes(b"kind: ConfigMap\napiVersion: v1\n")
    done = subprocess.run(
        [sys.executable, "-m", "upgrade_guard", "diff", str(bad), str(good)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(bad) in done.stderr


def test_gzip_bundles(tmp_path: Path) -> None:
    """A packed bundle reads as its content; a broken one is one line naming the file."""

    good = tmp_path / "good" / "crds.json.gz"
    good.parent.mkdir()
    good.write_bytes(gzip.compress(b'{"kind": "List", "items": []}'))
    hidden = tmp_path / "good" / "..data" / "crds.json.gz"  # a mounted ConfigMap's copy
    hidden.parent.mkdir()
    hidden.write_bytes(b"not read")
    assert [d.body["kind"] for d in load_documents(str(good.parent))] == ["List"]
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(gzip.compress(b'{"kind": "List"}')[:-6])
    with pytest.raises(LoadError, match=r"broken\.json\.gz: the gzip stream is truncated"):
        list(load_documents(str(broken)))
    garbage = tmp_path / "garbage.gz"
    garbage.write_bytes(b"\x1f\x8b" + b"\x00" * 20)
    with pytest.raises(LoadError, match=r"garbage\.gz: not a readable gzip file"):
        list(load_documents(str(garbage)))
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b" " * 100_000))
    with pytest.raises(LoadError, match="decompresses to more than the limit of 1000 bytes"):
        list(load_documents(str(bomb), 1000))
