"""Rule texts as the CEL C++ runtime must be given them to read them as cel-go does.

cel-go (``parser/unescape.go``) takes a raw literal's text between its quotes as it is, with
line breaks made ``\\n``: ``r'\\'`` is one backslash. cel-cpp (``internal/strings.cc``) lexes
the same tokens but then reads a backslash in a raw literal as escaping the next character:
it refuses a raw string or bytes literal ending in an odd number of backslashes ("String
must end with '"), and keeps a carriage return after a backslash as it is. Such literals
(every raw literal holding a backslash) are given to it as the escaped literal of the same
value, in the same quotes on the same lines: ``r'\\'`` as ``'\\\\'``, ``br'''a\\'''`` as
``b'''a\\\\'''``.

:func:`as_written` puts cel-cpp's issues back on the text as written: positions, the line
shown under them and the tokens quoted, as cel-go prints them.
"""

from __future__ import annotations

import re

# CEL's string and bytes literals (cel-spec's grammar, CEL.g4): raw ones (a ``b`` before the
# ``r``, never after) end at the first closing quote; the others hold CEL's escapes only.
RAW_LITERAL = r"""[bB]?[rR](?:'''.*?'''|\"\"\".*?\"\"\"|'[^'\n\r]*'|"[^"\n\r]*")"""
_ESCAPE = (
    r"""\\(?:[abfnrtv"'\\?`]|[0-3][0-7]{2}|[xX][0-9a-fA-F]{2}"""
    r"""|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})"""
)
ESCAPED_LITERAL = (
    rf"""[bB]?(?:'''(?:{_ESCAPE}|[^\\])*?'''|\"\"\"(?:{_ESCAPE}|[^\\])*?\"\"\""""
    rf"""|'(?:{_ESCAPE}|[^'\\\n\r])*'|"(?:{_ESCAPE}|[^"\\\n\r])*")"""
)
NAME = r"[_A-Za-z][_A-Za-z0-9]*+"
NUMBER = r"0[xX][0-9a-fA-F]+[uU]?|\d*\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?[uU]?"
_TOKEN = re.compile(
    rf"({RAW_LITERAL})|{ESCAPED_LITERAL}|{NAME}|{NUMBER}|//[^\n]*|`[A-Za-z0-9_./ -]+`|.",
    re.DOTALL,
)
_MAY_NEED = re.compile(r"[rR]['\"]")
MISREAD = re.compile(r"Invalid (?:string|bytes) literal: String must end with ")
"""cel-cpp's issue for a raw literal ending in a backslash."""
_ISSUE = re.compile(r"ERROR: <input>:(\d+):(\d+): ([^\n]*)(?:\n \| [^\n]*\n \| [^\n]*)?")
_LONGEST_SHOWN = 16384  # bytes of a line cel-go shows under an issue


def _rewrites(text: str) -> list[tuple[int, int, str]]:
    """(start, end, what cel-cpp is given) for each raw literal of ``text`` holding a
    backslash."""
    found = []
    for token in _TOKEN.finditer(text):
        literal = token.group(1)
        if literal is not None and "\\" in literal:
            at_r = 1 if literal[0] in "bB" else 0
            escaped = literal[:at_r] + literal[at_r + 1 :].replace("\\", "\\\\")
            found.append((token.start(), token.end(), escaped))
    return found


def for_runtime(text: str) -> str:
    """The text to give cel-cpp for ``text``: ``text`` itself, with each raw literal holding
    a backslash written as the escaped literal of the value cel-go gives it."""
    if "\\" not in text or _MAY_NEED.search(text) is None:
        return text
    parts: list[str] = []
    at = 0
    for start, end, escaped in _rewrites(text):
        parts += (text[at:start], escaped)
        at = end
    return "".join(parts) + text[at:]


def as_written(issues: str, text: str, given: str, lead: str = "") -> str:
    """cel-cpp's ``issues`` for ``lead + given`` (and whatever follows it on its last line),
    ``given`` being ``text`` or ``for_runtime(text)``, placed in ``text`` as cel-go places
    them; an issue outside ``text`` is left as it is."""
    rewrites = _rewrites(text) if given != text else []
    source = lead + given
    starts = [0, *(i + 1 for i, char in enumerate(source) if char == "\n")]

    def placed(found: re.Match[str]) -> str:
        line, column = int(found.group(1)), int(found.group(2))
        at = starts[line - 1] + column - 1 - len(lead) if line <= len(starts) else -1
        if not 0 <= at <= len(given):
            return found.group(0)
        shift = 0
        for start, end, escaped in rewrites:
            if at < start + shift:
                break
            if at < start + shift + len(escaped):  # in a literal given: at its start
                shift = at - start
                break
            shift += len(escaped) - (end - start)
        return _issue(text, at - shift, _quoting(found.group(3), text, rewrites))

    return _ISSUE.sub(placed, issues)


def _quoting(message: str, text: str, rewrites: list[tuple[int, int, str]]) -> str:
    """A message quoting the tokens given (syntax errors do), quoting them as written."""
    for start, end, escaped in rewrites:
        if escaped not in text:
            message = message.replace(_quoted(escaped), _quoted(text[start:end]))
    return message


def _quoted(token: str) -> str:
    """A token's text as ANTLR shows it in a syntax error."""
    return token.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _issue(text: str, offset: int, message: str) -> str:
    """An issue at ``offset`` of ``text`` as cel-go prints it (common/error.go): where, what,
    and the line with a caret under the place (unless the line is very long)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line, column = text.count("\n", 0, offset) + 1, offset - line_start + 1
    issue = f"ERROR: <input>:{line}:{column}: {message}"
    shown = text[line_start : None if line_end < 0 else line_end].replace("\t", " ")
    if len(shown.encode()) > _LONGEST_SHOWN:
        return issue
    dots = "".join("\uff0e" if ord(char) > 0x7F else "." for char in shown[: column - 1])
    caret = "\uff3e" if column <= len(shown) and ord(shown[column - 1]) > 0x7F else "^"
    return f"{issue}\n | {shown}\n | {dots}{caret}"
