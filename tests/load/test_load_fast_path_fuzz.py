"""Both YAML paths read generated YAML as Kubernetes does, and the fast one as the faithful one.

Generated YAML mixes what tells YAML 1.1 from 1.2 (``on``, ``010``, ``~``, ``inf``, ``<<``),
quoting styles and escapes, block scalars, flow and block collections, comments, anchors,
tags and document markers, some of it invalid. Wherever the fast (rapidyaml) path gives an
answer, the faithful (libyaml) path must give the same one (values, types and lines), and
must not refuse the stream; and a batch of single documents goes through helm's own reader
(helm_oracle), which both paths must agree with: the same value, or both refuse.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helm_oracle import (
    HelmError,
    first_difference,
    read_with_helm,
    require_helm,
    strictly_equal,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from upgrade_guard.load import yaml_reader, yaml_scalars
from upgrade_guard.load.fast_yaml import read_fast

WORDS = [
    "a", "b c", "on", "On", "oN", "y", "n", "No", "yes", "off", "true", "True", "tRUE", "false",
    "010", "0o7", "0x1F", "0b11", "08", "09.5", "1e3", "1E3", "1.", ".5", "-.5", "+.5", "1_000",
    "_1", "+1", "-0", "0", "12", "-12", "1.5", "9223372036854775808", "18446744073709551616",
    "1e400", "inf", "-inf", "nan", ".inf", "-.Inf", ".NaN", "Infinity", "~", "null", "Null",
    "NULL", "", "=", "<<", "2001-12-14", "1:30", "x#y", "http://x:1", "-x", "?x", ".", "-",
    "a: b", "@x", "%x", "`x", "!x", "&x", "*x", "[x", "{x", "x]", "x,y", "é", "日本", "'q'",
    '"q"', "tab\there", "back\\slash", "b:", "b :c", "a #c", '"x"#c', "'multi\n line'",
    '"multi\n  line"', '"multi\nline"',
]  # fmt: skip
ESCAPES = [
    "\\x41",
    "\\e",
    "\\N",
    "\\_",
    "\\L",
    "\\P",
    "\\0",
    "\\a",
    "\\/",
    "\\u00e9",
    "\\U0001F600",
    "\\ud800",
    "\\uDFFF",
    "\\ud83d\\ude00",
    "\\U0000D800",
    "\\\\/",
]


def _single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _double(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


scalars = st.one_of(
    st.sampled_from(WORDS),  # plain, whatever it means
    st.sampled_from(WORDS).map(_single),
    st.sampled_from(WORDS).map(_double),
    st.lists(st.sampled_from(ESCAPES + ["x", " "]), min_size=1, max_size=4).map(
        lambda parts: '"' + "".join(parts) + '"'
    ),
    st.sampled_from(["*anchor", "!!str 010", "!!int '7'", "&anchor on", "!custom x"]),
)
keys = st.one_of(
    st.sampled_from(["k", "key", "y", "on", "1", "010", "1.0", "~", "<<", "? q", "'y'", '"1"', ""]),
    st.sampled_from(["k" * 1030, '"' + "k:" * 520 + '"', "@k", "a\n b", '"a\n b"']),
    st.text("abcxyz", min_size=1, max_size=3),
)
BLOCK_SCALARS = ["|\n{i}line on\n{i}010\n", ">-\n{i}folded\n\n{i}on\n", "|+\n{i}keep\n\n"]


def _flow(node: Any, sep: str = ", ") -> str:
    if isinstance(node, dict):
        return "{" + sep.join(f"{k}: {_flow(v, sep)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + sep.join(_flow(v, sep) for v in node) + "]"
    return str(node)


def _block(node: Any, indent: int, draw: Any) -> str:
    """node rendered in block style at indent, as the text after 'key:' or '-'."""
    pad = " " * indent
    if isinstance(node, dict) and node and draw(st.integers(0, 3)):
        lines = []
        for key, value in node.items():
            comment = draw(st.sampled_from(["", "", " # c"]))
            lines.append(f"{pad}{key}:{_block(value, indent + 2, draw)}{comment}".rstrip(" "))
        return "\n" + "\n".join(lines)
    if isinstance(node, list) and node and draw(st.integers(0, 3)):
        lines = [f"{pad}-{_block(value, indent + 2, draw)}" for value in node]
        return "\n" + "\n".join(lines)
    if isinstance(node, dict | list):
        return " " + _flow(node, draw(st.sampled_from([", ", ",", f",\n{pad}", ", # c\n"])))
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return " " + draw(st.sampled_from(BLOCK_SCALARS)).format(i=pad).rstrip("\n")
    if choice == 1 and node and not str(node).startswith(("'", '"', "*", "&", "!")):
        return f" {node}\n{pad}continued"  # a plain scalar over two lines
    return f" {node}"


@st.composite
def documents(draw: Any, most: int = 3) -> bytes:
    tree = st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=4),
            st.dictionaries(keys, children, min_size=1, max_size=4),
        ),
        max_leaves=12,
    )
    streams = []
    for index in range(draw(st.integers(1, most))):
        body = draw(st.dictionaries(keys, tree, min_size=1, max_size=4))
        lines = [f"{key}:{_block(value, 2, draw)}" for key, value in body.items()]
        marker = draw(st.sampled_from(["---\n", "--- # doc\n", ""] if index == 0 else ["---\n"]))
        head = draw(st.sampled_from(["", "# comment\n", "\n"]))
        if draw(st.integers(0, 6)) == 0:
            lines.insert(0, "a: &anchor {x: 1}")
        streams.append(head + marker + "\n".join(lines) + "\n")
    text = "".join(streams)
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        text = _mutate(text, draw)
    return text.encode()


def _mutate(text: str, draw: Any) -> str:
    """Shift a line's indentation, or put in, take out or swap a character."""
    lines = text.split("\n")
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    operation = draw(st.sampled_from(["indent", "dedent", "insert", "delete", "swap"]))
    if operation == "indent":
        line = " " + line
    elif operation == "dedent" and line.startswith(" "):
        line = line[1:]
    elif operation == "insert":
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(st.sampled_from(list(":-?#'\" [{,}]|>&*!\\"))) + line[at:]
    elif operation == "delete" and line:
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + line[at + 1 :]
    elif operation == "swap" and len(lines) > 1:
        other = draw(st.integers(0, len(lines) - 1))
        lines[other], line = line, lines[other]
    lines[index] = line
    return "\n".join(lines)


# Alone, and as read_documents runs it: a document it may not read read by libyaml alone.
@pytest.mark.parametrize("one", [None, yaml_reader.read_one_faithfully], ids=["alone", "mixed"])
@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents())
def test_fast_path_reads_as_faithful_path(one: Any, data: bytes) -> None:
    fast = read_fast(data, yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs, one)
    if fast is None:
        return
    try:
        faithful = list(yaml_reader.read_documents_faithful(data))
    except yaml_scalars.YamlError as error:
        raise AssertionError(f"fast path read what libyaml refuses ({error}):\n{data!r}") from None
    assert [line for line, _ in fast] == [line for line, _ in faithful], data
    for (_, ours), (_, theirs) in zip(fast, faithful, strict=True):
        assert strictly_equal(ours, theirs), f"{first_difference(ours, theirs)}\n{data.decode()}"


HELD_TO_HELM = 400


@pytest.mark.cluster
def test_both_paths_read_as_helm_does() -> None:
    """Neither path reads a value where helm refuses the document or reads another value.

    Refusing what helm reads is failing closed, and allowed: libyaml checks the whole stream
    where go-yaml v2's Unmarshal stops after the first document, and refuses a redefined
    anchor. helm's fromYaml reads one document and only into a mapping: single documents
    here, and only mappings are compared.
    """
    helm = require_helm()
    drawn: list[bytes] = []

    @settings(
        max_examples=HELD_TO_HELM,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(documents(most=1))
    def draw(data: bytes) -> None:
        drawn.append(data)

    draw()
    theirs = read_with_helm(helm, {str(index): data for index, data in enumerate(drawn)})
    wrong = []
    for index, data in enumerate(drawn):
        expected = theirs[str(index)]
        fast = read_fast(data, yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs)
        try:
            faithful: Any = list(yaml_reader.read_documents_faithful(data))
        except yaml_scalars.YamlError:
            continue  # refused: failing closed (and the fast path must then decline)
        for path, read in (("faithful", faithful), ("fast", fast)):
            if read is None or len(read) != 1 or not isinstance(read[0][1], dict):
                continue
            if isinstance(expected, HelmError):
                wrong.append(f"{path} reads what helm refuses ({expected}):\n{data.decode()}")
            elif difference := first_difference(read[0][1], expected):
                wrong.append(f"{path}: {difference}:\n{data.decode()}")
    assert not wrong, f"{len(wrong)} of {len(drawn)} read otherwise than helm:\n" + "\n".join(
        wrong[:5]
    )


def test_a_document_the_fast_path_may_not_read_is_read_alone_by_libyaml() -> None:
    """A Deployment's quoted 'true' beside a plain true (cert-manager's) sends that document,
    not the stream, to libyaml; a document libyaml refuses sends the whole stream."""
    stream = b"a: 1\nb: [x]\n---\nc: 'true'\nd: true\ne: on\n---\nf: g\n"
    faithful = list(yaml_reader.read_documents_faithful(stream))
    assert read_fast(stream, yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs) is None
    mixed = read_fast(
        stream, yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs, yaml_reader.read_one_faithfully
    )
    read = [(1, {"a": 1, "b": ["x"]}), (4, {"c": "true", "d": True, "e": True}), (8, {"f": "g"})]
    assert mixed == faithful == read
    refused = stream + b"---\nh: 'true'\ni: on\nj: \"\\/\"\n"
    assert (
        read_fast(
            refused,
            yaml_scalars.MAX_DEPTH,
            yaml_scalars.plain_differs,
            yaml_reader.read_one_faithfully,
        )
        is None
    )
