"""Edge scalars, keys, merges and tags: our reading, held to Kubernetes' own (helm's fromYaml).

Every row is one YAML document and what Kubernetes reads from it (ERROR where it refuses
it). The table is checked three ways: our loader gives the expected value; the fast path,
where it takes the document, agrees with the faithful one; and helm's reader (the real
sigs.k8s.io/yaml + go-yaml v2) agrees with the table, so the table is not our own guess.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helm_oracle import HelmError, first_difference, read_with_helm, require_helm

from upgrade_guard.load import yaml_reader, yaml_scalars
from upgrade_guard.load.fast_yaml import read_fast
from upgrade_guard.load.yaml_reader import read_documents
from upgrade_guard.load.yaml_scalars import YamlError

ERROR = object()


def _words(text: str) -> list[str]:
    return text.split(" ")


def _v(value: Any) -> dict[str, Any]:
    return {"v": value}


TABLE: list[tuple[str, Any]] = [
    # YAML 1.1 booleans, three casings only
    *[(f"v: {word}\n", _v(True)) for word in _words("y Y yes Yes YES on On ON true True TRUE")],
    *[(f"v: {word}\n", _v(False)) for word in _words("n N no No NO off Off OFF false False FALSE")],
    *[(f"v: {word}\n", _v(word)) for word in _words("yES oN tRUE nO fALSE oFF")],
    ('v: "on"\n', _v("on")),
    ("v: 'yes'\n", _v("yes")),
    # nulls
    *[(f"v: {word}\n", _v(None)) for word in ["~", "null", "Null", "NULL", ""]],
    ("v: nULL\n", _v("nULL")),
    ('v: ""\n', _v("")),
    # integers: Go's ParseInt(s, 0, 64) after removing "_", then ParseUint
    ("v: 010\n", _v(8)),
    ("v: -010\n", _v(-8)),
    ("v: 0o10\n", _v(8)),
    ("v: 0x10\n", _v(16)),
    ("v: +0x10\n", _v(16)),
    ("v: 0x_1F\n", _v(31)),
    ("v: 0b10\n", _v(2)),
    ("v: -0b11\n", _v(-3)),
    ("v: 1_000\n", _v(1000)),
    ("v: 1__0\n", _v(10)),
    ("v: 1_\n", _v(1)),
    ("v: _1\n", _v("_1")),
    ("v: 0x\n", _v("0x")),
    ("v: 0o\n", _v("0o")),
    ("v: 0b2\n", _v("0b2")),
    ("v: 9223372036854775807\n", _v(9223372036854775807)),
    ("v: 9223372036854775808\n", _v(9223372036854775808)),
    ("v: 18446744073709551615\n", _v(18446744073709551615)),
    ("v: 18446744073709551616\n", _v(18446744073709551616.0)),
    ("v: -9223372036854775809\n", _v(-9223372036854775809.0)),
    ("v: +18446744073709551615\n", _v(18446744073709551615.0)),
    # floats: go-yaml v2's float syntax (no dot needed), ParseFloat range
    ("v: 08\n", _v(8.0)),
    ("v: 09.5\n", _v(9.5)),
    ("v: 1e3\n", _v(1000.0)),
    ("v: 1e+5\n", _v(100000.0)),
    ("v: 1.e5\n", _v(100000.0)),
    ("v: .5e1\n", _v(5.0)),
    ("v: +.5\n", _v(0.5)),
    ("v: .5_0\n", _v(0.5)),
    ("v: 0.\n", _v(0.0)),
    ("v: 1_000.5\n", _v(1000.5)),
    ("v: 1e-400\n", _v(0.0)),
    ("v: 1e400\n", _v("1e400")),
    ("v: -1e400\n", _v("-1e400")),
    ("v: 1e\n", _v("1e")),
    ("v: -.\n", _v("-.")),
    ("v: .\n", _v(".")),
    ("v: 0x1p3\n", _v("0x1p3")),
    *[
        (f"v: {word}\n", _v(word))
        for word in ["inf", "-inf", "nan", "Infinity", "NaN", "-infinity"]
    ],
    # not numbers for Kubernetes
    ("v: 1:30\n", _v("1:30")),
    ("v: 190:20:30\n", _v("190:20:30")),
    ("v: 2001-12-14\n", _v("2001-12-14")),
    ("v: 2001-12-14t21:59:43.10-05:00\n", _v("2001-12-14t21:59:43.10-05:00")),
    ("v: =\n", _v("=")),
    ("v: <<\n", _v("<<")),
    # infinities and NaN cannot become JSON
    ("v: .inf\n", ERROR),
    ("v: -.Inf\n", ERROR),
    ("v: .NaN\n", ERROR),
    ("v: [1, .inf]\n", ERROR),
    # keys become strings as sigs.k8s.io/yaml writes them
    ("y: 1\n", {"true": 1}),
    ("n: 1\n", {"false": 1}),
    ("on: 1\nNO: 2\n", {"true": 1, "false": 2}),
    ("'y': 1\n", {"y": 1}),
    ("1: a\n", {"1": "a"}),
    ("010: a\n", {"8": "a"}),
    ("1.0: a\n", {"1": "a"}),
    ("1.5: a\n", {"1.5": "a"}),
    ("1e6: a\n", {"1e+06": "a"}),
    ("1e5: a\n", {"100000": "a"}),
    ("0.1: a\n", {"0.1": "a"}),
    ("0.0001: a\n", {"0.0001": "a"}),
    ("1.5e-5: a\n", {"1.5e-05": "a"}),
    ("3.14159265358979: a\n", {"3.1415927": "a"}),
    (".inf: a\n-.inf: b\n.nan: c\n", {".inf": "a", "-.inf": "b", ".nan": "c"}),
    ("2001-12-14: a\n", {"2001-12-14": "a"}),
    ("~: a\n", ERROR),
    ("null: a\n", ERROR),
    ("18446744073709551615: a\n", ERROR),
    ("x: 1\nx: 2\n", {"x": 2}),
    # merge keys, in go-yaml v2's order
    ("a: 1\n<<: {a: 2, b: 3}\n", {"a": 2, "b": 3}),
    ("<<: {a: 2, b: 3}\na: 1\n", {"a": 1, "b": 3}),
    (
        "x: &x {a: 1}\nw: &w {a: 2, b: 2}\nz: {<<: [*x, *w]}\n",
        {"x": {"a": 1}, "w": {"a": 2, "b": 2}, "z": {"a": 1, "b": 2}},
    ),
    ("x: &x {a: 1}\nz: {b: 1, <<: *x, <<: {b: 5}}\n", {"x": {"a": 1}, "z": {"a": 1, "b": 5}}),
    # a sequence of mappings merges only when written in place, never through an alias
    ("z: {<<: [{a: 1}, {a: 2, b: 2}]}\n", {"z": {"a": 1, "b": 2}}),
    ("l: &l [{a: 1}, {b: 2}]\nz: {<<: *l}\n", ERROR),
    ("l: &l\n  - a: 1\nz:\n  <<: *l\n", ERROR),
    ("l: &l [{a: 1}]\nz: {<<: [*l]}\n", ERROR),
    ("m: &m {a: 1}\nl: &l [*m]\nz: {<<: *l}\n", ERROR),
    ('"<<": 1\n', {"<<": 1}),
    ("<<: 1\n", ERROR),
    ("a: {<<: [1]}\n", ERROR),
    # explicit tags, as go-yaml v2 resolves them
    ("v: !!str 010\n", _v("010")),
    ('v: !!int "010"\n', _v(8)),
    ("v: !!float 1\n", _v(1.0)),
    ('v: !!float "1e3"\n', _v(1000.0)),
    ("v: !!bool yes\n", _v(True)),
    ('v: !!null ""\n', _v(None)),
    ("v: !!int abc\n", ERROR),
    # escapes: go-yaml v2's table (no "\/"), no surrogate code points
    ('v: "\\/"\n', ERROR),
    ('v: ["a", "\\/"]\n', ERROR),
    ('v: "\\\\/"\n', _v("\\/")),
    ("v: '\\/'\n", _v("\\/")),
    ("v: a\\/b\n", _v("a\\/b")),
    ('v: "\\ud800"\n', ERROR),
    ('v: "\\uDFFF"\n', ERROR),
    ('v: "\\ud83d\\ude00"\n', ERROR),
    ('v: "\\U0000D800"\n', ERROR),
    ('v: "\\U0001F600"\n', _v("\U0001f600")),
    ('v: "\\x41\\u00e9\\N\\_\\L\\P"\n', _v("A\u00e9\x85\xa0\u2028\u2029")),
    ('v: "\\e\\0\\a\\v\\\t"\n', _v("\x1b\x00\x07\x0b\t")),
    ("v: !custom 010\n", _v("010")),
    ("v: !!binary aGVsbG8=\n", _v("hello")),
    ('v: !!binary "aGVsbG8"\n', ERROR),
    ("v: !!timestamp 2001-12-14\n", _v("2001-12-14")),
    ("v: !!str\n", _v("")),
    # plain multi-line and block scalars
    ("v: a\n  on\n", _v("a on")),
    ("v: |\n  on\n", _v("on\n")),
    # a block scalar that ends the stream without a line break keeps none
    ("v: |\n  x", _v("x")),
    ("v: |\n\n  010\n  on", _v("\n010\non")),
    ("v: >\n  a\n  b", _v("a b")),
    ("v: |+\n  x", _v("x")),
    ("v: |-\n  x\n", _v("x")),
    # keys: a repeated key's last value; keys that differ as YAML but not as JSON below
    ("m: {a: 1, a: 2}\n", {"m": {"a": 2}}),
    ('m: {1.0: a, "2": b}\n', {"m": {"1": "a", "2": "b"}}),
    # a tag in flow context: go-yaml v2 reads "," on into it
    ("v: [!x a, b]\n", _v(["a", "b"])),
    ("v: [!x,a]\n", ERROR),
    ("v: >-\n  010\n", _v("010")),
    # lines of a block scalar's text that start as libyaml refuses a plain scalar to
    ("v: |\n  `x` y\n  @z: 1\n", _v("`x` y\n@z: 1\n")),
    ("v: >-\n  a\n\n    }x\n  %y\n", _v("a\n\n  }x\n%y")),
    ("l:\n- k: |-\n    a\n    `x: 1\n", {"l": [{"k": "a\n`x: 1"}]}),
    ("d: |\n  a\nv: `x\n", ERROR),
    ("l:\n- k: |\n    a\n  `x: 1\n", ERROR),
    ("l:\n- k: |\n  `x: 1\n", ERROR),
    ("v: a |\n  `x\n", _v("a | `x")),
    ("v:\n  `x\n", ERROR),
]


def _ours(text: str) -> Any:
    try:
        documents = list(read_documents(text.encode()))
    except YamlError:
        return ERROR
    assert len(documents) == 1
    return documents[0][1]


def _ids() -> list[str]:
    return [text.replace("\n", "⏎") for text, _ in TABLE]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=_ids())
def test_reads_as_kubernetes_does(text: str, expected: Any) -> None:
    ours = _ours(text)
    if expected is ERROR:
        assert ours is ERROR
    else:
        assert ours is not ERROR
        assert first_difference(ours, expected) is None, first_difference(ours, expected)
        assert ours == expected


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=_ids())
def test_fast_path_agrees_with_faithful_path(text: str, expected: Any) -> None:
    fast = read_fast(text.encode(), yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs)
    try:
        faithful: Any = list(yaml_reader.read_documents_faithful(text.encode()))
    except YamlError:
        faithful = ERROR
    assert fast is None or fast == faithful


@pytest.mark.cluster
def test_table_is_what_helm_reads() -> None:
    """The expected column is Kubernetes' reading: sigs.k8s.io/yaml via helm's fromYaml."""
    helm = require_helm()
    theirs = read_with_helm(helm, {text: text.encode() for text, _ in TABLE})
    wrong = []
    for text, expected in TABLE:
        got = theirs[text]
        if expected is ERROR:
            if not isinstance(got, HelmError):
                wrong.append(f"{text!r}: Kubernetes reads {got!r}, table says ERROR")
        elif isinstance(got, HelmError):
            wrong.append(f"{text!r}: Kubernetes refuses it ({got}), table says {expected!r}")
        elif difference := first_difference(expected, got):
            wrong.append(f"{text!r}: {difference}")
    assert not wrong, "\n".join(wrong)


# What Kubernetes reads otherwise than libyaml, or either way, which we refuse (failing closed),
# with every reading helm gives: keys that become one JSON key (sigs.k8s.io/yaml writes them
# in Go's random map order), and a tag running into "," in flow context (go-yaml v2 reads it
# into the tag, libyaml ends the tag there).
REFUSED: list[tuple[str, list[Any]]] = [
    ('m: {1.0: a, "1": b}\n', [{"m": {"1": "a"}}, {"m": {"1": "b"}}]),
    ('m: {1: a, "1": b}\n', [{"m": {"1": "a"}}, {"m": {"1": "b"}}]),
    ('m: {true: a, "true": b}\n', [{"m": {"true": "a"}}, {"m": {"true": "b"}}]),
    ('v: [!!str 010, !x, "-inf"]\n', [_v(["010", "-inf"])]),
]


@pytest.mark.parametrize(("text", "readings"), REFUSED, ids=[t for t, _ in REFUSED])
def test_what_kubernetes_reads_otherwise_than_libyaml_is_refused(
    text: str, readings: list[Any]
) -> None:
    assert _ours(text) is ERROR


@pytest.mark.cluster
def test_refused_rows_are_what_helm_reads() -> None:
    """helm gives each refused row's readings, and only those, over 24 reads (where it
    reads one or the other from run to run, all 24 alike has odds 2**-23)."""
    helm = require_helm()
    reads = {
        f"{row} {n}": text.encode() for row, (text, _) in enumerate(REFUSED) for n in range(24)
    }
    theirs = read_with_helm(helm, reads)
    for row, (text, readings) in enumerate(REFUSED):
        got = {json.dumps(theirs[f"{row} {n}"], sort_keys=True) for n in range(24)}
        assert got == {json.dumps(reading, sort_keys=True) for reading in readings}, text
