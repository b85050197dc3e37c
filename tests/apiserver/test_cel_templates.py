"""Rules read by template (validation/cel_templates.py) read exactly as their texts do
(cel_reads.Read: what each reads, the expressions' shape, the aliases of fields only tested
by has()). Held over every rule and messageExpression of every release of the corpus and of
the compile and cost tests, and over a table of tricky texts, each beside its nearest plain
neighbour, with the template each is read by (None: read as it is)."""

from __future__ import annotations

import pytest

from apiserver.test_cel_verdicts import ROW_RULES, corpus_roots
from upgrade_guard.apiserver import cel_reads, cel_templates


def _used(rule: str, message: str = "") -> tuple[str, ...] | None:
    """The template texts the entry is read by; None where it is read as it is."""
    general = cel_templates.template((rule, message))
    if general is None or cel_reads._template_read(*general.texts) is None:
        return None
    return general.texts


def _assert_same_read(rule: str, message: str = "") -> None:
    assert cel_reads._read.__wrapped__(rule, message) == cel_reads._read_texts(rule, message)


def test_every_corpus_entry() -> None:
    entries = {
        (str(raw.get("rule") or ""), str(raw.get("messageExpression") or ""))
        for root in corpus_roots()
        for site in cel_reads.sites(root)
        for raw in site.rules
        if isinstance(raw, dict)
    }
    for rule, message in entries:
        _assert_same_read(rule, message)
    templates = {_used(rule, message) for rule, message in entries} - {None}
    # upjet's 578 required-field rules are a handful of templates
    assert len(entries) > 600
    assert len(templates) < 60


@pytest.mark.parametrize("entry", [rule for _, rule in ROW_RULES], ids=str)
def test_row_entries(entry: dict[str, str]) -> None:
    _assert_same_read(entry["rule"], entry.get("messageExpression", ""))


# (rule, the template it is read by, else None), each tricky text beside its plain neighbour
TEXTS: list[tuple[str, str | None]] = [
    ("self.a == 'b'", "self._ugf0 == 'b'"),
    ("self.a == 'x.b'", "self._ugf0 == 'x.b'"),  # a dot inside a string
    ('self.a == "x.b" || self.c', 'self._ugf0 == "x.b" || self._ugf1'),
    ("self.a == 'it\\'s .b'", "self._ugf0 == 'it\\'s .b'"),  # escaped quotes
    ('self.a == "say \\".b\\""', 'self._ugf0 == "say \\".b\\""'),
    ("self.a == r'\\d.b' && self.c == 'e'", "self._ugf0 == r'\\d.b' && self._ugf1 == 'e'"),
    ('self.a == R"\\\\" || self.b', 'self._ugf0 == R"\\\\" || self._ugf1'),  # raw: no escapes
    ("self.a == r'\\' && self.b == 'c'", "self._ugf0 == r'\\' && self._ugf1 == 'c'"),
    ("b'.x' == self.a", "b'.x' == self._ugf0"),  # bytes
    ("Br'\\\\.x' == self.a", "Br'\\\\.x' == self._ugf0"),
    ("rb'x' == self.a", None),  # not CEL: r takes no b after it
    ("'''it's\n.a''' == self.b", "'''it's\n.a''' == self._ugf0"),  # triple-quoted
    ('"""say "hi" .a""" == self.b', '"""say "hi" .a""" == self._ugf0'),
    ('r"""\\d""" == self.b', 'r"""\\d""" == self._ugf0'),
    ("self.a // see self.b\n == 1", "self._ugf0 // see self.b\n == 1"),  # comments
    ("self.// a comment\n a == 1", "self.// a comment\n _ugf0 == 1"),
    ("self.a == 1 // 'unterminated", "self._ugf0 == 1 // 'unterminated"),
    ("self.a == 'b", None),  # unterminated: does not parse
    ("self.a > 1.5e3", "self._ugf0 > 1.5e3"),  # numbers
    ("1.e5 == self.a", "1._ugf0 == self._ugf1"),  # 1, then a field e5 of it
    ("self.a > .5", "self._ugf0 > .5"),
    ("self.a > 0x1Fu", "self._ugf0 > 0x1Fu"),
    ("self.a.b", "self._ugf0._ugf1"),  # reserved words after a dot
    ("self.a.in", None),
    ("self.a.null", None),
    ("self.a.namespace", None),  # parses; read as it is all the same
    ("self.a.as", None),
    ("self.__namespace__ == 'a'", "self._ugf0 == 'a'"),  # escaped property names
    ("self.x__dot__y == 'a'", "self._ugf0 == 'a'"),
    ("self.a == 'b'", "self._ugf0 == 'b'"),  # backticks
    ("self.`a.b` == 'c'", None),
    ("self.a == '`'", None),
    ("self.a.size() == 1", "self._ugf0.size() == 1"),  # functions keep their names
    ("self.a .size () == 1", "self._ugf0 .size () == 1"),
    ("self.a.size // a comment\n () == 1", "self._ugf0.size // a comment\n () == 1"),
    ("self.a.size == 1", "self._ugf0._ugf1 == 1"),  # a field named size
    ("has(self.a.b)", "has(self._ugf0._ugf1)"),  # macros
    ("self.a.all(x, x.b > 0)", "self._ugf0.all(x, x._ugf1 > 0)"),
    ("self.a.exists(x, x.b > 0)", "self._ugf0.exists(x, x._ugf1 > 0)"),
    ("self.a.exists_one(x, x.b > 0)", "self._ugf0.exists_one(x, x._ugf1 > 0)"),
    ("self.a.map(x, x.b)", "self._ugf0.map(x, x._ugf1)"),
    ("self.a.map(x, x.b > 0, x.c)", "self._ugf0.map(x, x._ugf1 > 0, x._ugf2)"),
    ("self.a.filter(x, x.b > 0)", "self._ugf0.filter(x, x._ugf1 > 0)"),
    ("self.a.all(k, v, v.b > 0)", "self._ugf0.all(k, v, v._ugf1 > 0)"),
    ("self.a.exists(k, v, v.b > 0)", "self._ugf0.exists(k, v, v._ugf1 > 0)"),
    ("self.a.transformList(i, v, v.b)", "self._ugf0.transformList(i, v, v._ugf1)"),
    ("cel.bind(x, self.a, x.b)", "cel.bind(x, self._ugf0, x._ugf1)"),
    ("self.a.b == self.b", "self._ugf0._ugf1 == self._ugf1"),  # the same name twice
    ("has(self.a.b) && self.b.a", "has(self._ugf0._ugf1) && self._ugf1._ugf0"),
    ("self.a == 'b'", "self._ugf0 == 'b'"),  # a name equal to a placeholder
    ("self._ugf0 == 'b'", None),
    ("self.a == '_ugf0'", None),
    ("self.?a.b == 1", "self.?a._ugf0 == 1"),  # optional field: a literal, not a name
    (".a.b == 1", None),  # a name from the root: a placeholder in an identifier
    ("self.a.b{} == 1", None),  # a message's name
    ("google.protobuf.Int64Value{value: 1} == self.a", None),
    ("self.b'x'", None),  # a field, then a string: does not parse
    ("self.a ==", None),
    (f"self.a == '{'x' * 9_950}'", f"self._ugf0 == '{'x' * 9_950}'"),  # long texts
    (f"self.a == '{'x' * 10_000}'", None),
]


@pytest.mark.parametrize(("rule", "used"), TEXTS)
def test_tricky_texts(rule: str, used: str | None) -> None:
    assert _used(rule) == (None if used is None else (used, ""))
    _assert_same_read(rule)


# (rule, messageExpression, the templates they are read by)
ENTRIES: list[tuple[str, str, tuple[str, str] | None]] = [
    ("self.a > 0", "'a is ' + string(self.b)", ("self._ugf0 > 0", "'a is ' + string(self._ugf1)")),
    ("self.a > 0", "'a is ' + string(self.a)", ("self._ugf0 > 0", "'a is ' + string(self._ugf0)")),
    ("self.a > 0", "'a is ' + string(self._ugf0)", None),
    ("self.a > 0", "'a is ' + string(self.in)", None),
    ("self.a > 0", "'a is ' + ", None),  # the message does not parse
    ("self.a > 0", "  ", ("self._ugf0 > 0", "  ")),
]


@pytest.mark.parametrize(("rule", "message", "used"), ENTRIES)
def test_rule_and_message(rule: str, message: str, used: tuple[str, str] | None) -> None:
    assert _used(rule, message) == used
    _assert_same_read(rule, message)
