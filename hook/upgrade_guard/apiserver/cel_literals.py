"""cel-go's literal validators, which the apiserver runs on every expression it compiles from
1.29 (``cel.ValidateDurationLiterals``, ``ValidateTimestampLiterals``,
``ValidateRegexLiterals``): ``duration('...')``, ``timestamp('...')`` and
``x.matches('...')`` with a string literal that does not parse are compile errors. The C++
checker does not run them, so they are read here from the expression's text.

Only the plain forms are read: a call whose only argument is one string literal. Anything
else is left to the runtime, which never refuses it here.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator

from . import regexes

_GO_DURATION = re.compile(r"[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)")
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-](\d{2}):(\d{2}))"
)
# Single-character escapes: Go's set for single-quoted text (which fieldPath reads), and
# CEL's, which has three more.
QUOTED_ESCAPES = dict(zip("abfnrtv\\'", "\a\b\f\n\r\t\v\\'", strict=True))
_SIMPLE_ESCAPES = {**QUOTED_ESCAPES, '"': '"', "`": "`", "?": "?"}
_STRING_START = re.compile(r"(?i:r)?(\"\"\"|'''|\"|')")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# A token: (kind, text or value, offset); kind is "string", "ident" or the character.
Token = tuple[str, str | None, int]


def _string(text: str, at: int) -> tuple[str | None, int] | None:
    """The string literal at ``at``: its value (None when it holds an escape not read here)
    and where it ends; None when no string starts there (bytes literals are not strings)."""
    found = _STRING_START.match(text, at)
    if found is None or text[at - 1 : at] in ("b", "B"):
        return None
    raw = found.group(0)[0] in "rR"
    quote = found.group(1)
    i = found.end()
    value: list[str] | None = []
    while i < len(text):
        if text.startswith(quote, i):
            return ("".join(value) if value is not None else None), i + len(quote)
        char = text[i]
        if char == "\\" and not raw:
            escaped = text[i + 1 : i + 2]
            if value is not None and escaped in _SIMPLE_ESCAPES:
                value.append(_SIMPLE_ESCAPES[escaped])
            else:
                value = None
            i += 2
            continue
        if value is not None:
            value.append(char)
        i += 1
    return None


def _tokens(text: str) -> Iterator[Token]:
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
            continue
        identifier = _IDENT.match(text, i)
        literal = _string(text, i) if char in "'\"rR" else None
        if literal is not None:
            value, end = literal
            yield ("string", value, i)
            i = end
        elif identifier is not None:
            yield ("ident", identifier.group(0), i)
            i = identifier.end()
        else:
            yield (char, None, i)
            i += 1


def _valid_duration(value: str) -> bool:
    return _GO_DURATION.fullmatch(value) is not None


def _valid_timestamp(value: str) -> bool:
    found = _RFC3339.fullmatch(value)
    if found is None:
        return False
    year, month, day, hour, minute, second = (int(found.group(n)) for n in range(1, 7))
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    zone = found.group(7)
    return zone == "Z" or (int(found.group(8)) < 24 and int(found.group(9)) < 60)


def _valid_regex(value: str) -> bool:
    return regexes.problem(value) is None


_CHECKS = {
    "duration": ("invalid duration argument", _valid_duration, False),
    "timestamp": ("invalid timestamp argument", _valid_timestamp, False),
    "matches": ("invalid matches argument", _valid_regex, True),
}


def problems(text: str) -> list[str]:
    """cel-go's issues for the literals of ``text`` that do not parse, as it prints them."""
    tokens = list(_tokens(text))
    found = []
    for n, (kind, name, _) in enumerate(tokens):
        if kind != "ident" or name not in _CHECKS:
            continue
        message, valid, member = _CHECKS[name]
        after_dot = n > 0 and tokens[n - 1][0] == "."
        call = tokens[n + 1 : n + 4]
        if after_dot is not member or [t[0] for t in call] != ["(", "string", ")"]:
            continue
        value = call[1][1]
        if value is not None and not valid(value):
            found.append(_issue(text, call[1][2], message))
    return found


def _issue(text: str, offset: int, message: str) -> str:
    """One issue as cel-go prints it: the literal's position, its line, a caret."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start : None if line_end < 0 else line_end]
    number = text.count("\n", 0, offset) + 1
    column = offset - line_start
    return f"ERROR: <input>:{number}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"
