"""Regular expressions as the apiserver reads a schema's ``pattern``: Go's regexp (RE2
syntax), read by Python's re after translation.

Where the two read the same text differently, the translation spells out Go's meaning:

- ``$`` (and ``\\z``) match only at the end of the text, never before a final newline
  (``"abc\\n"`` does not match ``^abc$``); with the ``m`` flag, ``^`` and ``$`` match at
  line ends as in Python;
- ``\\d``, ``\\w``, ``\\s``, ``\\b`` and the POSIX classes (``[[:alpha:]]``) are ASCII, and
  ``\\s`` has no vertical tab; case folding (``(?i)``) stays Unicode, as in Go;
- a flag group mid-pattern (``a(?i)b``) holds to the end of its group;
- ``\\Q...\\E`` is literal text, ``\\x{263a}`` a code point, ``(?<name>`` a named group;
- ``{`` that does not start a repeat count (``a{,3}``) is a literal brace.

Unicode classes (``\\pL``), the ``U`` flag and Go syntax with no Python equivalent give
None: the value is then reported unchecked, never taken as matched or not. Each reading is
held to kube-apiserver v1.35.4 by tests/cluster/test_crd_validation_truth.py.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_PERL_CLASSES = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}
_WORD = "[0-9A-Za-z_]"
_BOUNDARY = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"
_REPEAT_AT = re.compile(r"\{(\d+)(,(\d*))?\}")
_HEX_AT = re.compile(r"x(\{([0-9A-Fa-f]+)\}|[0-9A-Fa-f]{2})")
_FLAGS_AT = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])")
_NAME_AT = re.compile(r"\(\?P?<([A-Za-z0-9_]+)>")
_ESCAPED_LITERALS = frozenset("afnrtv")


class _Unsupported(Exception):
    """Go syntax this translation does not give Python (the pattern is then unchecked)."""


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` as Python's re reads it with Go's meaning, or None when it cannot."""
    python = translated(pattern)
    if python is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "possible nested set": a meaning RE2 does not give
        try:
            return re.compile(python)
        except (re.error, FutureWarning):
            return None


def translated(pattern: str) -> str | None:
    """``pattern`` in Python's syntax with Go's meaning, or None when it cannot be."""
    try:
        return _Translation(pattern).text()
    except _Unsupported:
        return None


class _Translation:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.at = 0
        self.out: list[str] = []
        # per open group: whether the m flag holds, and flag groups opened mid-group
        self.groups: list[list[int]] = [[0]]
        self.multiline = [False]

    def text(self) -> str:
        pattern = self.pattern
        while self.at < len(pattern):
            char = pattern[self.at]
            if char == "\\":
                self._escape()
            elif char == "[":
                self._class()
            elif char == "(":
                self._open()
            elif char == ")":
                self._close()
            elif char == "{":
                match = _REPEAT_AT.match(pattern, self.at)
                text = match[0] if match else "\\{"
                self.out.append(text)
                self.at += len(match[0]) if match else 1
            elif char == "$":
                self.out.append("(?m:$)" if self.multiline[-1] else "\\Z")
                self.at += 1
            elif char == "^":
                self.out.append("(?m:^)" if self.multiline[-1] else "\\A")
                self.at += 1
            else:
                self.out.append(char)
                self.at += 1
        self._end_group()
        return "".join(self.out)

    def _escape(self) -> None:
        pattern = self.pattern
        if self.at + 1 >= len(pattern):
            raise _Unsupported
        char = pattern[self.at + 1]
        self.at += 2
        if char in _PERL_CLASSES:
            self.out.append(f"[{_PERL_CLASSES[char]}]")
        elif char.lower() in _PERL_CLASSES:
            self.out.append(f"[^{_PERL_CLASSES[char.lower()]}]")
        elif char == "b":
            self.out.append(_BOUNDARY)
        elif char == "B":
            self.out.append(_NOT_BOUNDARY)
        elif char == "A":
            self.out.append("\\A")
        elif char == "z":
            self.out.append("\\Z")
        elif char == "Q":
            end = pattern.find("\\E", self.at)
            end = len(pattern) if end < 0 else end
            self.out.append(re.escape(pattern[self.at : end]))
            self.at = end + 2
        elif char == "x":
            self.out.append(re.escape(self._hex()))
        elif char in _ESCAPED_LITERALS or not char.isalnum():
            self.out.append("\\" + char)
        else:
            raise _Unsupported  # \pL, \C, octal, and what Go refuses

    def _hex(self) -> str:
        match = _HEX_AT.match(self.pattern, self.at - 1)
        if match is None:
            raise _Unsupported
        self.at = match.end()
        code = int(match[2] or match[1], 16)
        if code > 0x10FFFF:
            raise _Unsupported
        return chr(code)

    def _class(self) -> None:
        pattern = self.pattern
        parts = ["["]
        self.at += 1
        if pattern.startswith("^", self.at):
            parts.append("^")
            self.at += 1
        first = True
        while True:
            if self.at >= len(pattern):
                raise _Unsupported  # unterminated: Go refuses it
            char = pattern[self.at]
            if char == "]" and not first:
                parts.append("]")
                self.at += 1
                break
            first = False
            end = pattern.find(":]", self.at + 2) if pattern.startswith("[:", self.at) else -1
            if end > 0:
                name = pattern[self.at + 2 : end]
                if name not in _POSIX_CLASSES:
                    raise _Unsupported  # [:^alpha:], or a name Go refuses
                parts.append(_POSIX_CLASSES[name])
                self.at = end + 2
                continue
            if char == "\\":
                escaped = pattern[self.at + 1 : self.at + 2]
                self.at += 2
                if escaped in _PERL_CLASSES:
                    parts.append(_PERL_CLASSES[escaped])
                elif escaped == "x":
                    parts.append(re.escape(self._hex()))
                elif escaped and (escaped in _ESCAPED_LITERALS or not escaped.isalnum()):
                    parts.append("\\" + escaped)
                else:
                    raise _Unsupported
                continue
            parts.append("\\" + char if char in "[&~|" else char)
            self.at += 1
        self.out.append("".join(parts))

    def _open(self) -> None:
        pattern = self.pattern
        flags = _FLAGS_AT.match(pattern, self.at)
        if flags is not None and (flags[1] or flags[2] is not None):
            on, off, end = flags[1], flags[2] or "", flags[3]
            if "U" in on + off:
                raise _Unsupported
            multiline = ("m" in on) or (self.multiline[-1] and "m" not in off)
            python_flags = on.replace("m", "") + ("-" + off.replace("m", "") if off else "")
            python_flags = python_flags.rstrip("-")
            self.at = flags.end()
            self.out.append(f"(?{python_flags}:" if python_flags else "(?:")
            if end == ")":  # to the end of the enclosing group
                self.groups[-1][0] += 1
                self.multiline[-1] = multiline
            else:
                self.groups.append([0])
                self.multiline.append(multiline)
            return
        named = _NAME_AT.match(pattern, self.at)
        if named is not None:
            self.out.append(f"(?P<{named[1]}>")
            self.at = named.end()
        elif pattern.startswith("(?:", self.at):
            self.out.append("(?:")
            self.at += 3
        elif pattern.startswith("(?", self.at):
            raise _Unsupported  # lookarounds, atomic groups...: Go refuses them
        else:
            self.out.append("(")
            self.at += 1
        self.groups.append([0])
        self.multiline.append(self.multiline[-1])

    def _close(self) -> None:
        if len(self.groups) == 1:
            raise _Unsupported  # unbalanced: Go refuses it
        self._end_group()
        self.groups.pop()
        self.multiline.pop()
        self.out.append(")")
        self.at += 1

    def _end_group(self) -> None:
        self.out.append(")" * self.groups[-1][0])


# Go's RE2 syntax errors, where Python can tell ------------------------------------------------
_PERL_ONLY = re.compile(r"\(\?(?:[=!>#(]|<[=!])|\\[1-9]")
# Python's re errors for patterns RE2 refuses too (others, such as a flag group mid-pattern,
# are Python's alone).
_REFUSED_BY_BOTH = (
    "missing ), unterminated subpattern",
    "unbalanced parenthesis",
    "nothing to repeat",
    "multiple repeat",
    "unterminated character set",
    "bad character range",
)
_REPEAT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")
_RE2_MAX_REPEAT = 1000


def _possessive(pattern: str) -> bool:
    """Whether a repetition is followed by ``+`` (``a*+``): Python 3.11 reads a possessive
    repeat, Go a nested repetition, which it refuses (both refuse the other nestings)."""
    at, repeated = 0, False
    while at < len(pattern):
        char = pattern[at]
        if char == "+" and repeated:
            return True
        if char == "\\":
            at += 2
            repeated = False
            continue
        if char == "[":
            at = _class_end(pattern, at)
            repeated = False
            continue
        counted = _REPEAT_AT.match(pattern, at) if char == "{" else None
        repeated = char in "*+?" or counted is not None
        at = counted.end() if counted else at + 1
    return False


def _class_end(pattern: str, start: int) -> int:
    """Where the character class opened at ``start`` ends (past its ``]``)."""
    at = start + 1
    if pattern.startswith("^", at):
        at += 1
    if pattern.startswith("]", at):
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return at + 1


@lru_cache(maxsize=4096)
def problem(pattern: str) -> str | None:
    """Why Go's regexp (RE2) refuses ``pattern``, where Python can tell; None otherwise."""
    if _PERL_ONLY.search(pattern):
        return "error parsing regexp: invalid or unsupported Perl syntax"
    if re.search(r"(?<!\\)(?:\\\\)*\\Z", pattern):
        return "error parsing regexp: invalid escape sequence: `\\Z`"
    if _possessive(pattern):
        return "error parsing regexp: invalid nested repetition operator"
    for match in _REPEAT.finditer(pattern):
        low, high = int(match.group(1)), match.group(2)
        bounds = [low] + ([int(high)] if high else [])
        if max(bounds) > _RE2_MAX_REPEAT or (high and int(high) < low):
            return f"error parsing regexp: invalid repeat count: `{match.group(0)}`"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as error:
        if str(error).startswith("bad escape (end of pattern)"):
            return "error parsing regexp: trailing backslash at end of expression: ``"
        if any(str(error).startswith(known) for known in _REFUSED_BY_BOTH):
            return f"error parsing regexp: {error.msg}"
    return None
