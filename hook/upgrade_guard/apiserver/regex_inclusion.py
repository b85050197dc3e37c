"""Whether every string one schema ``pattern`` accepts, another accepts too.

The apiserver accepts a string when Go's regexp finds the pattern anywhere in it
(``MatchString``: a search, not a full match). RE2 patterns are regular, so inclusion is
decidable: both patterns are read as :mod:`regexes` reads them (Go's meaning in
Python's syntax), parsed by Python's own regular expression parser, and built into automata
over ranges of code points, searched with ``\\A`` (``^``) holding only before the first
character and ``\\Z`` (``$``) only after the last. The two are explored together, subset by
subset, for a string the old pattern accepts and the new one does not.

What this does not model is left undecided, never taken as included: multi-line ``^`` and
``$``, ``\\b`` and ``\\B``, a pattern Go refuses or the translation cannot read, and
automata past the caps below (a large repeat count, or a state explosion).
"""

from __future__ import annotations

import bisect
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

# Python's parser, the one re.compile uses (the translation is Python syntax); its public
# name sre_parse is deprecated, and it has kept this shape since 3.11.
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from upgrade_guard.apiserver import regexes

Ranges = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive

_LAST = sys.maxunicode
# No character from the third plane on has a case variant (tests/rules: the whole range
# scanned): the case table's scan stops there, an eighth of the range, 0.11 -> 0.02 s.
_CASED_BELOW = 0x20000
_EVERYTHING: Ranges = ((0, _LAST),)
_NOT_NEWLINE: Ranges = ((0, 9), (11, _LAST))
_ALWAYS, _AT_START, _AT_END = 0, 1, 2  # when an empty move may be taken
# Past these the question is left undecided: NFA states per pattern, and the work of the
# search (a unit per state reached and per class of characters tried): 0.3 to 0.6 s of one
# shared core here. The largest of the corpus' pattern changes takes a quarter of it.
_MAX_STATES = 4000
_MAX_WORK = 200_000
_KNOWN_FLAGS = sre.SRE_FLAG_IGNORECASE | sre.SRE_FLAG_DOTALL | sre.SRE_FLAG_UNICODE


@dataclass(frozen=True)
class Refusal:
    """What the new pattern refuses of the old one's strings: ``example``, one string the
    old pattern accepts and the new does not; None when that could not be decided, and
    ``undecided`` says why."""

    example: str | None
    undecided: str = ""


class _Undecided(Exception):
    pass


@lru_cache(maxsize=1024)
def refusal(old: str | None, new: str) -> Refusal | None:
    """None when ``new`` accepts every string ``old`` accepts (no pattern: any string)."""
    try:
        before = _nfa("" if old is None else old)
        after = _nfa(new)
        example = _Product(before, after).counterexample()
    except _Undecided as undecided:
        return Refusal(None, str(undecided))
    return None if example is None else Refusal(example)


class _Nfa:
    """A search for the pattern: any text, the pattern, any text. State 0 starts; the
    accepting state loops on every character."""

    def __init__(self) -> None:
        self.moves: list[list[tuple[Ranges, int]]] = []
        self.empty: list[list[tuple[int, int]]] = []  # (when, target)
        self.accepting = -1

    def state(self) -> int:
        if len(self.moves) >= _MAX_STATES:
            raise _Undecided(f"more than {_MAX_STATES} automaton states")
        self.moves.append([])
        self.empty.append([])
        return len(self.moves) - 1

    def sequence(self, items: Iterable[tuple[Any, Any]], at: int, flags: int) -> int:
        for op, av in items:
            at = self.item(op, av, at, flags)
        return at

    def item(self, op: Any, av: Any, at: int, flags: int) -> int:
        folded = bool(flags & sre.SRE_FLAG_IGNORECASE)
        if op is sre.LITERAL:
            return self.move(at, _fold(((av, av),)) if folded else ((av, av),))
        if op is sre.NOT_LITERAL:
            single: Ranges = ((av, av),)
            return self.move(at, _complement(_fold(single) if folded else single))
        if op is sre.ANY:
            return self.move(at, _EVERYTHING if flags & sre.SRE_FLAG_DOTALL else _NOT_NEWLINE)
        if op is sre.IN:
            return self.move(at, _class(av, folded))
        if op is sre.BRANCH:
            _, alternatives = av
            end = self.state()
            for alternative in alternatives:
                self.empty[self.sequence(alternative, at, flags)].append((_ALWAYS, end))
            return end
        if op is sre.SUBPATTERN:
            _, on, off, items = av
            if (on | off) & ~_KNOWN_FLAGS:
                raise _Undecided("multi-line ^ or $")
            return self.sequence(items, at, (flags | on) & ~off)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, items = av
            return self.repeat(low, None if high == sre.MAXREPEAT else high, items, at, flags)
        if op is sre.AT and av in (sre.AT_BEGINNING_STRING, sre.AT_END_STRING):
            end = self.state()
            when = _AT_START if av is sre.AT_BEGINNING_STRING else _AT_END
            self.empty[at].append((when, end))
            return end
        if op in (sre.ASSERT, sre.ASSERT_NOT):  # the translation's \b and \B
            raise _Undecided("a word boundary (\\b, \\B)")
        raise _Undecided(f"{str(op).lower()} is not compared")

    def move(self, at: int, ranges: Ranges) -> int:
        end = self.state()
        if ranges:
            self.moves[at].append((ranges, end))
        return end

    def repeat(
        self,
        low: int,
        high: int | None,
        items: Sequence[tuple[Any, Any]],
        at: int,
        flags: int,
    ) -> int:
        for _ in range(low):
            at = self.sequence(items, at, flags)
        if high is None:
            loop = self.state()
            self.empty[at].append((_ALWAYS, loop))
            self.empty[self.sequence(items, loop, flags)].append((_ALWAYS, loop))
            return loop
        end = self.state()
        for _ in range(high - low):
            self.empty[at].append((_ALWAYS, end))
            at = self.sequence(items, at, flags)
        self.empty[at].append((_ALWAYS, end))
        return end


@lru_cache(maxsize=1024)
def _nfa(pattern: str) -> _Nfa:
    # _Undecided raised here is not cached: the pattern is read again, and refused again.
    if regexes.problem(pattern) is not None:
        raise _Undecided("Go refuses it")
    translated = regexes.translated(pattern)
    if translated is None or regexes.compiled(pattern) is None:
        raise _Undecided("Go syntax not read here (such as \\pL)")
    nfa = _Nfa()
    start = nfa.state()
    nfa.moves[start].append((_EVERYTHING, start))
    end = nfa.sequence(_parser.parse(translated), start, 0)
    nfa.accepting = end if end != start else nfa.state()
    if end == start:
        nfa.empty[start].append((_ALWAYS, nfa.accepting))
    nfa.moves[nfa.accepting].append((_EVERYTHING, nfa.accepting))
    return nfa


def _class(items: Sequence[tuple[Any, Any]], folded: bool) -> Ranges:
    ranges: list[tuple[int, int]] = []
    negated = False
    for op, av in items:
        if op is sre.LITERAL:
            ranges.append((av, av))
        elif op is sre.RANGE:
            ranges.append(av)
        elif op is sre.NEGATE:
            negated = True
        else:
            raise _Undecided(f"{str(op).lower()} in a class is not compared")
    union = _union(ranges)
    union = _fold(union) if folded else union
    return _complement(union) if negated else union


def _union(ranges: Iterable[tuple[int, int]]) -> Ranges:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return tuple(merged)


def _complement(ranges: Ranges) -> Ranges:
    gaps, low = [], 0
    for start, end in ranges:
        if start > low:
            gaps.append((low, start - 1))
        low = end + 1
    if low <= _LAST:
        gaps.append((low, _LAST))
    return tuple(gaps)


def _fold(ranges: Ranges) -> Ranges:
    """``ranges`` with every character's case variants, as ``(?i)`` reads them."""
    cased, orbits = _case_orbits()
    extra: list[tuple[int, int]] = []
    for low, high in ranges:
        for at in range(bisect.bisect_left(cased, low), bisect.bisect_right(cased, high)):
            extra.extend((other, other) for other in orbits[cased[at]])
    return _union((*ranges, *extra))


@lru_cache(maxsize=1)
def _case_orbits() -> tuple[list[int], dict[int, tuple[int, ...]]]:
    """The characters with case variants, sorted, and each one's variants: those of the same
    simple case folding, as Go folds them (k, K and the Kelvin sign; s, S and the long s; not
    the dotless i). Python knows the common folding (casefold, where it gives one character);
    a character folded otherwise in full has its simple folding as its lower case (ẞ: ß)."""
    groups: dict[str, list[int]] = {}
    for block in range(0, _CASED_BELOW, 256):
        text = "".join(map(chr, range(block, block + 256)))
        if text.casefold() == text == text.lower():
            continue  # no character here folds to another
        for code in range(block, block + len(text)):
            char = chr(code)
            folded, lower = char.casefold(), char.lower()
            key = folded if len(folded) == 1 else lower if len(lower) == 1 else char
            if key != char or folded != char:
                groups.setdefault(key, []).append(code)
    orbits: dict[int, tuple[int, ...]] = {}
    for key, codes in groups.items():
        orbit = tuple(sorted({ord(key), *codes})) if len(key) == 1 else ()
        if len(orbit) < 2:
            continue
        for code in orbit:
            orbits[code] = orbit
    return sorted(orbits), orbits


Subset = frozenset[int]
Pair = tuple[Subset, Subset, bool]  # the old search's states, the new one's, at the start


class _Product:
    """The two searches run side by side on the same text, one subset of states each."""

    def __init__(self, old: _Nfa, new: _Nfa) -> None:
        self.nfas = (old, new)
        bounds = {0}
        for nfa in self.nfas:
            for moves in nfa.moves:
                for ranges, _ in moves:
                    for low, high in ranges:
                        bounds.update((low, high + 1))
        self.bounds = sorted(bound for bound in bounds if bound <= _LAST)
        self.following: tuple[dict[Subset, list[Subset]], ...] = ({}, {})
        self.work = 0
        # classes holding a letter or a digit first, so that an example reads well
        self.order = sorted(range(len(self.bounds)), key=lambda index: self._shown(index)[0])

    def closure(self, side: int, states: Iterable[int], at_start: bool, at_end: bool) -> Subset:
        """``states`` and those reached from them by empty moves, here."""
        empty = self.nfas[side].empty
        seen = set(states)
        todo = list(seen)
        while todo:
            for when, target in empty[todo.pop()]:
                allowed = when == _ALWAYS or (at_start if when == _AT_START else at_end)
                if allowed and target not in seen:
                    seen.add(target)
                    todo.append(target)
        self.spend(len(seen))
        return frozenset(seen)

    def spend(self, work: int) -> None:
        self.work += work
        if self.work > _MAX_WORK:
            raise _Undecided(f"more than {_MAX_WORK} units of work")

    def accepts(self, side: int, states: Subset, at_start: bool) -> bool:
        """Whether the text read so far, ending here, is accepted."""
        return self.nfas[side].accepting in self.closure(side, states, at_start, at_end=True)

    def successors(self, side: int, states: Subset) -> list[Subset]:
        """Per class of characters, the states after reading one of them."""
        known = self.following[side].get(states)
        if known is not None:
            return known
        reached: list[set[int]] = [set() for _ in self.bounds]
        for state in states:
            for ranges, target in self.nfas[side].moves[state]:
                for low, high in ranges:
                    first = bisect.bisect_left(self.bounds, low)
                    last = bisect.bisect_right(self.bounds, high)
                    self.spend(last - first)
                    for index in range(first, last):
                        reached[index].add(target)
        closures: dict[Subset, Subset] = {}
        result = []
        for targets in reached:
            self.spend(len(targets))
            key = frozenset(targets)
            if key not in closures:
                closures[key] = self.closure(side, key, at_start=False, at_end=False)
            result.append(closures[key])
        self.following[side][states] = result
        return result

    def counterexample(self) -> str | None:
        """A shortest text the old search accepts and the new one does not, or None."""
        start: Pair = (
            self.closure(0, [0], at_start=True, at_end=False),
            self.closure(1, [0], at_start=True, at_end=False),
            True,
        )
        came_from: dict[Pair, tuple[Pair, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            pair = queue.popleft()
            old, new, at_start = pair
            if self.accepts(0, old, at_start) and not self.accepts(1, new, at_start):
                return self._text(pair, came_from)
            if self.nfas[1].accepting in new:
                continue  # the new search accepts whatever follows
            self.spend(len(self.bounds))
            olds, news = self.successors(0, old), self.successors(1, new)
            for index in self.order:
                following = (olds[index], news[index], False)
                if following not in came_from:
                    came_from[following] = (pair, index)
                    queue.append(following)
        return None

    def _text(self, pair: Pair, came_from: dict[Pair, tuple[Pair, int] | None]) -> str:
        chars: list[str] = []
        while (previous := came_from[pair]) is not None:
            pair, index = previous
            chars.append(self._shown(index)[1])
        return "".join(reversed(chars))

    def _shown(self, index: int) -> tuple[int, str]:
        """A character of class ``index``, a letter or digit where it has one, and its rank
        among the classes' (lower case, digits, upper case, other printable ASCII, the rest)."""
        low = self.bounds[index]
        high = self.bounds[index + 1] - 1 if index + 1 < len(self.bounds) else _LAST
        for rank, (first, last) in enumerate(((97, 122), (48, 57), (65, 90), (32, 126))):
            if low <= last and high >= first:
                return rank, chr(max(low, first))
        return 4, chr(low)
