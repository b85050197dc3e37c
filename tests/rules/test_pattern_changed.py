"""UG211's question, whether a new pattern accepts every string the old one accepted, as a
paired table: each widening beside the nearest narrowing, and what is left undecided (then
flagged, as before the question was decided). Strings are judged as the apiserver judges
them: Go's regexp finds the pattern anywhere in the string."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crd_builders import field_crd, flagged
from upgrade_guard.apiserver import regex_inclusion, regexes

STR = {"type": "string"}
WIDENED, UNDECIDED = None, "undecided"


def case(old: str | None, new: str, expected: str | None, id: str) -> Any:
    return pytest.param(old, new, expected, id=id)


# expected: WIDENED (every string accepted before still is), the refused example, or UNDECIDED
TABLE = [
    case("^(http|https)://", "^(http|https|socks5)://", WIDENED, "alternative added"),
    case("^(http|https|socks5)://", "^(http|https)://", "socks5://", "alternative removed"),
    case("^[a-z]+$", "^[a-z0-9]+$", WIDENED, "class widened"),
    case("^[a-z0-9]+$", "^[a-z]+$", "0", "class narrowed"),
    case("^[a-z]{1,63}$", "^[a-z]{1,253}$", WIDENED, "repeat count loosened"),
    case("^a{2,3}$", "^a+$", WIDENED, "repeat count to unbounded"),
    case("^a+$", "^a{2,3}$", "a", "repeat count tightened"),
    case("^abc$", "^abc", WIDENED, "end anchor dropped"),
    case("^abc", "abc", WIDENED, "start anchor dropped"),
    case("abc", "^abc", "aabc", "start anchor added"),
    case("^a", "^a$", "aa", "end anchor added"),
    case("^a$|^b$", "^(a|b)$", WIDENED, "rewritten, same strings"),
    case(r"^\d+$", "^[0-9]+$", WIDENED, r"\d is ASCII, as in RE2"),
    case(r"^\w+$", "^[a-z]+$", "0", r"\w narrowed to lower case"),
    case("^.$", r"^[^\n]$", WIDENED, ". is any character but a newline"),
    case("(?s)^.$", "^.$", "\n", "(?s) dropped: a newline refused"),
    case("^x$", "^x$|^$", WIDENED, "the empty string added"),
    case("^(a|b$)", "^a|b", WIDENED, "an anchor inside an alternative"),
    case("^abc$", "(?i)^abc$", WIDENED, "case folded"),
    case("(?i)^abc$", "^abc$", "abC", "case folding dropped"),
    case("^[kK]$", "(?i)^k$", WIDENED, "(?i)k holds k and K"),
    case("(?i)^k$", "^[kK]$", "\u212a", "(?i)k holds the Kelvin sign too, as in Go"),
    case("(?i)^[a-z]$", "^[a-zA-Z\u017f\u212a]$", WIDENED, "(?i)[a-z]: the long s, Kelvin"),
    case("^[a-zA-Z]$", "(?i)^[a-z]$", WIDENED, "(?i)[a-z] holds A-Z"),
    case(None, ".*", WIDENED, "added, accepting any string"),
    case(None, "^a", "", "added, refusing a string"),
    case("^a$", r"^a\b", UNDECIDED, r"\b: flagged"),
    case("(?m)^a$", "(?m)^(a|b)$", UNDECIDED, "multi-line anchors: flagged"),
    case(r"^\pL$", r"^\pL|x$", UNDECIDED, "a Unicode class: flagged"),
    case("^a$", "^(?:[a-z]{100}){50}$", UNDECIDED, "past the automaton's states: flagged"),
    case("[ab]*a[ab]{16}", "[ab]*a[ab]{16}|c", UNDECIDED, "past the work: flagged"),
    case("^a$", "^(a", UNDECIDED, "a pattern Go refuses: flagged"),
]


def test_no_character_from_the_third_plane_on_has_a_case_variant() -> None:
    """The case table's scan stops below regex_inclusion._CASED_BELOW: this interpreter's
    Unicode has nothing cased from there to the last character (a character that folds to
    or lowers into another is one the scan would have grouped)."""
    last = sys.maxunicode
    for block in range(regex_inclusion._CASED_BELOW, last + 1, 256):
        text = "".join(map(chr, range(block, min(block + 256, last + 1))))
        assert text.casefold() == text == text.lower(), f"U+{block:05X}"


@pytest.mark.parametrize(("old", "new", "expected"), TABLE)
def test_widened_narrowed_or_undecided(old: str | None, new: str, expected: str | None) -> None:
    refusal = regex_inclusion.refusal(old, new)
    if expected is WIDENED:
        assert refusal is None
        return
    assert refusal is not None
    if expected == UNDECIDED:
        assert refusal.example is None
        assert refusal.undecided
        return
    assert refusal.example == expected
    assert _accepts(old, expected)
    assert not _accepts(new, expected)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param("^a", "^(a|b)", set(), id="widened: not flagged"),
        pytest.param("^(a|b)", "^a", {("UG211", "spec.field")}, id="narrowed: flagged"),
        pytest.param("^a", r"^a\b", {("UG211", "spec.field")}, id="undecided: flagged"),
    ],
)
def test_rule_flags_what_is_not_widened(old: str, new: str, expected: set[object]) -> None:
    before, after = {**STR, "pattern": old}, {**STR, "pattern": new}
    assert flagged(field_crd(before), field_crd(after)) == expected


def _accepts(pattern: str | None, text: str) -> bool:
    """As the apiserver does, through the validator of stored objects' reading."""
    if pattern is None:
        return True
    compiled = regexes.compiled(pattern)
    assert compiled is not None
    return compiled.search(text) is not None


# Random patterns over a few characters, and every string of up to four of them: whatever
# the inclusion check claims holds for each string.
_ALPHABET = "abA0\n\u212a"
_TEXTS = ["".join(chars) for n in range(5) for chars in itertools.product(_ALPHABET, repeat=n)]
_ATOMS = ["a", "b", "A", "0", ".", "[ab]", "[^a]", r"\d", r"\w", "(?i:a)", "(?i:k)", "(?s:.)"]
_ATOMS += ["^", "$", "(?:)"]


def _patterns() -> st.SearchStrategy[str]:
    def extended(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda pair: f"(?:{pair[0]}|{pair[1]})"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,}"])).map(
                lambda pair: f"(?:{pair[0]}){pair[1]}"
            ),
        )

    return st.recursive(st.sampled_from(_ATOMS), extended, max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(old=_patterns(), new=_patterns(), widen=st.booleans())
def test_inclusion_claims_hold_for_every_short_string(old: str, new: str, widen: bool) -> None:
    if widen:
        new = f"{old}|{new}"  # a widening more often than two patterns at random
    refusal = regex_inclusion.refusal(old, new)
    if refusal is None:
        refused = [text for text in _TEXTS if _accepts(old, text) and not _accepts(new, text)]
        assert refused == []
    elif refusal.example is not None:
        assert _accepts(old, refusal.example)
        assert not _accepts(new, refusal.example)
    if widen:
        assert refusal is None
