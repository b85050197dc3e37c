"""JSON is read as JSON, as Kubernetes reads it: one test per place Python's json and Go's
encoding/json differ (json_cases, held to the apiserver by tests/cluster/test_json_reading),
kubectl's choice between JSON and YAML, and every corpus CRD reads the same from JSON as
from YAML."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from helm_oracle import strictly_equal
from hypothesis import given, settings
from hypothesis import strategies as st
from json_cases import CASES, REFUSED, Case, body, read_back

from corpus import CORPUS, projects, require_corpus, tags
from upgrade_guard.load.documents import LoadError, documents_of, load_documents


def _read(data: bytes) -> list[tuple[int, Any]]:
    return [(document.line, document.body) for document in documents_of("f.json", data)]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_json_reads_as_the_apiserver_does(case: Case) -> None:
    if case.annotations_read is REFUSED:
        with pytest.raises(LoadError, match=r"f\.json: line 1: cannot read the number"):
            _read(body(case))
        return
    [(line, crd)] = _read(body(case))
    assert line == 1
    annotations, default = read_back(crd)
    assert strictly_equal(annotations, case.annotations_read)
    assert strictly_equal(default, case.default_read)


def _as_go_reads(number: str) -> int | float:
    """A JSON number as the apiserver reads it: an int64 where it is one, else a float64
    (inf where it is beyond float64: refused)."""
    if re.fullmatch(r"-?[0-9]+", number) and -(2**63) <= int(number) < 2**63:
        return int(number)
    return float(number)


NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(2**65), 2**65).map(str),
    st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
)


@settings(max_examples=1500)
@given(NUMBERS)
def test_every_number_reads_as_the_apiserver_reads_it(number: str) -> None:
    """Whichever reader takes it (orjson, or json where orjson would differ)."""
    data = b'{"n":' + number.encode() + b"}"
    expected = _as_go_reads(number)
    if math.isinf(expected):
        with pytest.raises(LoadError, match="cannot read the number"):
            _read(data)
        return
    [(_, read)] = _read(data)
    assert (type(read["n"]), repr(read["n"])) == (type(expected), repr(expected))


def _nested(arrays: int, leaf: list[str]) -> dict[str, Any]:
    value: Any = leaf
    for _ in range(arrays - 1):
        value = [value]
    return {"a": value}


# Streams as kubectl v1.35 reads them (kubectl create --dry-run=client -o json): JSON when
# the first non-space character is "{", and from a value that is not JSON on, YAML.
STREAMS: list[tuple[bytes, list[tuple[int, Any]] | str]] = [
    (b'  \n {"a":1}\n{"b":2}\n\n{"c":[3]}', [(2, {"a": 1}), (3, {"b": 2}), (5, {"c": [3]})]),
    (b'{"a":1}\n---\nb: on\n', [(1, {"a": 1}), (3, {"b": True})]),
    (b'{"a": on, "b": 010}', [(1, {"a": True, "b": 8})]),  # not JSON: YAML
    (b'{"a": NaN}', [(1, {"a": "NaN"})]),  # NaN is not JSON; YAML reads a string
    (b'{"a":1} trailing', [(1, {"a": 1}), (1, "trailing")]),
    (b'a: {"b": 1}\n---\n{"c": "\\/"}\n', "found unknown escape character"),  # YAML throughout
    (b'{"a":1}\n---\n\xff: x\n', "not UTF-8"),
    (b'{"a":' + b"[" * 201 + b"]" * 201 + b"}", "nested deeper than 200 levels"),
    (b'{"a":"\\"[[[\\\\"}', [(1, {"a": '"[[[\\'})]),  # brackets in strings are not nesting
    # an integer beyond int64 is a float64 wherever it stands, after digits in strings too
    (
        b'{"a":"1\\"2","b":[1,99999999999999999999],"c":99999999999999999999}',
        [(1, {"a": '1"2', "b": [1, 1e20], "c": 1e20})],
    ),
    # a lone surrogate escape is one U+FFFD; an escaped backslash before "ud800" is text
    (b'{"a":"\\\\ud800","b":"\\ud800"}', [(1, {"a": "\\ud800", "b": "\ufffd"})]),
    # At the limit, beside one level more: with an escaped backslash before a string's
    # closing quote and an escaped quote after one (neither ends or opens a string), and with
    # other escapes there or spelling a bracket.
    (
        b'{"a":' + b"[" * 199 + b'"\\\\", "\\\\\\"]"' + b"]" * 199 + b"}",
        [(1, _nested(199, ["\\", '\\"]']))],
    ),
    (b'{"a":' + b"[" * 200 + b'"\\\\", "\\\\\\"]"' + b"]" * 200 + b"}", "deeper than 200"),
    (
        b'{"a":' + b"[" * 199 + b'"[\\n", "\\u005b{\\t"' + b"]" * 199 + b"}",
        [(1, _nested(199, ["[\n", "[{\t"]))],
    ),
    (b'{"a":' + b"[" * 200 + b'"[\\n", "\\u005b{\\t"' + b"]" * 200 + b"}", "deeper than 200"),
]


@pytest.mark.parametrize(("data", "expected"), STREAMS, ids=[repr(d[:24]) for d, _ in STREAMS])
def test_json_or_yaml_as_kubectl_decides(data: bytes, expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(LoadError, match=expected):
            _read(data)
    else:
        assert _read(data) == expected


PROJECTS = projects() or ["(corpus absent)"]


@pytest.mark.parametrize("project", PROJECTS)
def test_corpus_reads_the_same_from_json(project: str) -> None:
    """Every document of every tag, written as minified JSON, reads back exactly (same
    keys in the same order, same types), so goldens do not depend on the input format."""
    require_corpus()
    for tag in tags(project):
        for document in load_documents(str(CORPUS / project / tag)):
            data = json.dumps(document.body, separators=(",", ":"), ensure_ascii=False).encode()
            [(_, again)] = _read(data)
            assert strictly_equal(again, document.body), document.source
