"""Rule texts as the CEL C++ runtime is given them (validation/cel_source.py): each raw
literal it misreads beside its nearest neighbour, with the text it is given and the value
cel-go v0.26.0 (parser/unescape.go) gives the literal, which the runtime must then give."""

from __future__ import annotations

import pytest

from upgrade_guard.apiserver import cel_rules, cel_source

# (literal as written, as given to the runtime, cel-go's value; None: cel-go refuses it)
LITERALS: list[tuple[str, str, str | bytes | None]] = [
    ("r'\\'", "'\\\\'", "\\"),  # a raw string ends at its first closing quote
    ("r'\\''", "'\\\\''", None),  # and the quote after it is left unclosed
    ('r"\\"', '"\\\\"', "\\"),
    ("R'''\\'''", "'''\\\\'''", "\\"),
    ("R'''\\''''", "'''\\\\''''", None),
    ('r"""a\\"""', '"""a\\\\"""', "a\\"),
    ("r'\\\\\\'", "'\\\\\\\\\\\\'", "\\\\\\"),  # an odd number of backslashes
    ("r'\\\\'", "'\\\\\\\\'", "\\\\"),  # an even one (the runtime reads it, given as it is)
    ("r'\\d\\.'", "'\\\\d\\\\.'", "\\d\\."),
    ("r'a'", "r'a'", "a"),  # no backslash: as written
    ("'\\\\'", "'\\\\'", "\\"),  # not raw: as written
    ("r'''a\\\r\nb'''", "'''a\\\\\r\nb'''", "a\\\nb"),  # a line break after a backslash
    ("r'''a\r\nb'''", "r'''a\r\nb'''", "a\nb"),  # one after anything else
    ("br'\\'", "b'\\\\'", b"\\"),  # bytes: a b before the r
    ("Br'''\\x41\\'''", "B'''\\\\x41\\\\'''", b"\\x41\\"),
    ("rb'\\'", "rb'\\'", None),  # never after it
    ("b'\\x41'", "b'\\x41'", b"A"),
]


@pytest.mark.parametrize(("written", "given", "value"), LITERALS, ids=[w for w, _, _ in LITERALS])
def test_literal(written: str, given: str, value: str | bytes | None) -> None:
    assert cel_source.for_runtime(written) == given
    program = cel_rules.environment((1, 35)).compile
    if value is None:
        with pytest.raises(RuntimeError):
            program(given)
        return
    result = program(given).eval(data={"self": None}).plain_value()
    assert (bytes(result) if isinstance(value, bytes) else result) == value


# The runtime as written: it refuses what cel-go reads, or reads another value.
MISREAD: list[tuple[str, str | None]] = [
    ("r'\\'", None),
    ("br'\\'", None),
    ("r'''a\\\r\nb'''", "a\\\r\nb"),
]


@pytest.mark.parametrize(("written", "value"), MISREAD, ids=[w for w, _ in MISREAD])
def test_the_runtime_misreads_them_as_written(written: str, value: str | None) -> None:
    program = cel_rules.environment((1, 35)).compile
    if value is None:
        with pytest.raises(RuntimeError, match="String must end with"):
            program(written)
        return
    assert program(written).eval(data={"self": None}).plain_value() == value


# (text, as given): raw literals found as CEL's lexer finds them
TEXTS: list[tuple[str, str]] = [
    ("self.a == r'\\' // r'\\'", "self.a == '\\\\' // r'\\'"),  # not in a comment
    ("self.a == 'r\\'\\\\' + r'\\'", "self.a == 'r\\'\\\\' + '\\\\'"),  # nor in a string
    ("xr'\\' == 'a'", "xr'\\' == 'a'"),  # a name, then a string
    ("1r'\\'", "1'\\\\'"),  # a number, then a raw string
    ("self.`a//b` == r'\\'", "self.`a//b` == '\\\\'"),  # a quoted name
    ("'\\q r'\\''", "'\\q '\\\\''"),  # an escape CEL lacks ends the string there
]


@pytest.mark.parametrize(("text", "given"), TEXTS, ids=[t for t, _ in TEXTS])
def test_text(text: str, given: str) -> None:
    assert cel_source.for_runtime(text) == given


def test_issues_are_placed_in_the_text_as_written() -> None:
    text = "'é' + r'\\\\\\' + 1 +\n r'\\' + 2"
    given = cel_source.for_runtime(text)
    with pytest.raises(RuntimeError) as raised:
        cel_rules.environment((1, 35)).compile(given)
    issues = str(raised.value).removeprefix("INVALID_ARGUMENT: ")
    assert cel_source.as_written(issues, text, given) == (
        "ERROR: <input>:1:14: found no matching overload for '_+_' applied to '(string, int)'\n"
        " | 'é' + r'\\\\\\' + 1 +\n"
        " | .．...........^\n"
        "ERROR: <input>:2:7: found no matching overload for '_+_' applied to '(string, int)'\n"
        " |  r'\\' + 2\n"
        " | ......^"
    )
