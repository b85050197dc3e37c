"""Rule texts as templates: the field names a rule selects replaced by placeholders.

The provider CRDs' thousands of rules are a few hundred texts of one shape, each naming
another field (upjet writes ``has(self.forProvider.NAME)`` for each required NAME). A
field's name never changes the structure of a syntax tree, so what a rule reads
(:mod:`cel_reads`) is read once per template and named after.

A field selection is an identifier right after a ``.`` token and not followed by ``(``
(that is a function or a macro), found by a lexer over CEL's tokens: strings in every
quoting, ``//`` comments, numbers, identifiers. Each distinct name gets a placeholder by
order of first appearance, across all the texts of a rule. Where there is doubt,
:func:`template` gives None and the texts are read as they are: a name CEL reserves (after
a ``.`` it does not parse, a placeholder would), a backtick (quoted names), a text holding
the placeholders' mark, a text near the parser's size limit. A template is taken only where
:func:`fields_only` finds every field its syntax trees select named by a placeholder, each
exactly as often as it was put in, and the placeholders nowhere else.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .cel_ast import Expr
from .cel_source import ESCAPED_LITERAL, NAME, NUMBER, RAW_LITERAL

MARK = "_ugf"
"""The placeholders' prefix: the first name's is ``_ugf0``, the second's ``_ugf1``, ..."""

_PLACEHOLDER = re.compile(MARK + r"\d+")
# The parser refuses an expression of more than 100,000 code points; a placeholder is at
# most a few times longer than the name it stands for.
_LONGEST = 10_000
# cel-spec's reserved words: the literals and ``in``, and those kept for host languages.
_RESERVED = frozenset({
    "false", "in", "null", "true", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
    "void", "while",
})  # fmt: skip
_GAP = r"(?:[\t\n\f\r ]|//[^\n]*+)*+"  # whitespace and comments, as CEL's lexer skips them
_CALLED = rf"(?={_GAP}\()"
# Each match: the code up to the next field name (tokens whole, so that no dot or name
# inside a string, comment or number is taken), the gap after the name's dot, the name.
_PIECES = re.compile(
    rf"""
    (
      (?:
        [^.'"/0-9A-Za-z_]++
        |{RAW_LITERAL}
        |{ESCAPED_LITERAL}
        |{NAME}
        |{NUMBER}
        |//[^\n]*
        |[^.]
        |\.(?!{_GAP}{NAME}(?!{_CALLED}))
      )*+
    )
    (?:\.({_GAP})({NAME})(?!{_CALLED}))?
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Template:
    """Texts with their field names replaced by placeholders."""

    texts: tuple[str, ...]
    names: Mapping[str, str]
    """The name each placeholder stands for."""


def template(texts: tuple[str, ...]) -> Template | None:
    """The texts (a rule's expressions) as one template; None where in doubt (see the
    module's documentation) or where they select no field."""
    if any(len(text) > _LONGEST or MARK in text or "`" in text for text in texts):
        return None
    placeholders: dict[str, str] = {}
    general = []
    for text in texts:
        parts = []
        for code, gap, name in _PIECES.findall(text):
            parts.append(code)
            if name:
                if name in _RESERVED:
                    return None
                placeholder = placeholders.setdefault(name, f"{MARK}{len(placeholders)}")
                parts.append(f".{gap}{placeholder}")
        general.append("".join(parts))
    if not placeholders or any(len(text) > _LONGEST for text in general):
        return None
    return Template(tuple(general), {p: name for name, p in placeholders.items()})


def fields_only(trees: Iterable[Expr], texts: Iterable[str]) -> frozenset[str] | None:
    """The placeholders of the template ``texts``, where their syntax trees select fields by
    placeholder only (the lexer missed none), each exactly as many times as the texts hold
    it, and hold the mark nowhere else (no literal, identifier, function or message name);
    else None."""
    put = Counter(found for text in texts for found in _PLACEHOLDER.findall(text))
    seen: Counter[str] = Counter()
    stack = list(trees)
    while stack:
        e = stack.pop()
        value = e.value.decode(errors="replace") if isinstance(e.value, bytes) else e.value
        if isinstance(value, str) and MARK in value:
            return None
        if any(MARK in name for name in (e.iter_var, e.iter_var2, e.accu_var)):
            return None
        if e.kind == "select":
            if not _PLACEHOLDER.fullmatch(e.name):
                return None
            seen[e.name] += 1
        elif MARK in e.name:
            return None
        stack.extend(part for entry in e.entries for part in entry)
        stack.extend(e.args)
        stack.extend(
            child
            for child in (
                e.operand,
                e.iter_range,
                e.accu_init,
                e.loop_condition,
                e.loop_step,
                e.result,
            )
            if child is not None
        )
    return frozenset(put) if seen == put else None
