"""The Kubernetes minors whose apiservers the model follows, and what differs between them.

From 1.32, the oldest minor a major managed offering still supports in December 2026 (Amazon
EKS extended support: 1.32 until March 2027), to 1.35, the newest release. A version outside
the range is judged as the nearest minor in it.

What differs in the range (the sources at v1.32.13 and v1.35.4, and the notes of the features
that arrived between them):

- The CEL environments (k8s.io/apiserver ``pkg/cel/environment/base.go``): each library
  carries the version it was introduced at, and the apiserver compiles a CRD's rules in one of
  two environments (apiextensions ``validation.go``, ``preexistingExpressions``): a rule or
  messageExpression that the CRD it replaces held already, in the environment of stored
  expressions (every library of the server's minor); any other in that of new expressions,
  pinned to the server's minimum compatibility version (``DefaultCompatibilityVersion``: the
  minor before its own, without ``--emulated-version``).
- The formats stored objects are held to (``StripUnsupportedFormatsPostProcessorForVersion``,
  at the compatibility version): ``k8s-short-name`` and ``k8s-long-name`` from 1.35.
- Ratcheting of a ``/status`` write (``status_strategy.go`` ``ValidateUpdate``): from 1.33
  (kubernetes#129506) as an UPDATE's; before, none: ``status`` is validated against its
  schema and every CEL rule of the object runs, failing values unchanged or not.
- The cost estimator (cel-go v0.22 at 1.32, v0.23 from 1.33: :mod:`cel_cost`).

Ratcheting of an UPDATE (on by default from 1.30, GA at 1.33; ``ratcheting.go`` the same at
both ends of the range) and the cost limits (``StaticEstimatedCostLimit``,
``StaticEstimatedCRDCostLimit``, ``PerCallLimit``) do not differ in the range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Minor = tuple[int, int]

OLDEST: Minor = (1, 32)
NEWEST: Minor = (1, 35)
# The first minor whose /status writes are ratcheted (kubernetes#129506).
STATUS_RATCHETED: Minor = (1, 33)
# The first minor whose CEL cost estimator sizes containers' entries (cel-go v0.23.0,
# cel-go#1104): before it, rules are costed otherwise (:mod:`cel_cost`).
ENTRY_SIZES: Minor = (1, 33)


def judged_as(version: Minor) -> tuple[Minor, str | None]:
    """The minor the model judges a server of ``version`` as, and a note where that is not
    ``version`` itself."""
    if version < OLDEST:
        nearest, which = OLDEST, "older than the oldest"
    elif version > NEWEST:
        nearest, which = NEWEST, "newer than the newest"
    else:
        return version, None
    return nearest, (
        f"Kubernetes {_text(version)} is {which} minor the apiserver model knows"
        f" ({_text(OLDEST)} to {_text(NEWEST)}): judged as {_text(nearest)}"
    )


def compatibility(minor: Minor) -> Minor:
    """The compatibility version of the apiserver of ``minor``
    (``DefaultCompatibilityVersion``: its minimum compatibility version, the minor before its
    own): the environment it compiles new CEL expressions in, and the formats it knows."""
    return (minor[0], minor[1] - 1)


def _text(version: Minor) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class Library:
    """A CEL library of the range that a rule can name, by the version it was introduced at
    (``base.go``); ``spelled`` finds its use in a rule, the name used in its last group."""

    since: Minor
    name: str
    spelled: re.Pattern[str]
    used: str = "{}"

    def used_by(self, text: str) -> str | None:
        """What of the library ``text`` uses, or None."""
        found = self.spelled.search(text)
        return None if found is None else self.used.format(found.group(found.lastindex or 0))


def _calls(members: str, functions: str = "") -> re.Pattern[str]:
    """Calls of the member functions and the global functions named (alternations)."""
    pattern = rf"\.\s*({members})\s*\(" if members else ""
    if functions:
        pattern += ("|" if pattern else "") + rf"(?<![\w.])({functions})\s*\("
    return re.compile(pattern)


LIBRARIES = (
    # ext.TwoVarComprehensions: all, exists, existsOne and exists_one with two variables,
    # transforms.
    Library(
        (1, 32),
        "the two-variable comprehensions library",
        re.compile(r"\.\s*(all|exists|existsOne|exists_one)\s*\(\s*\w+\s*,\s*\w+\s*,"),
        "{} with two variables",
    ),
    Library(
        (1, 32),
        "the two-variable comprehensions library",
        _calls("transformMapEntry|transformMap|transformList"),
    ),
    Library((1, 33), "the semver library", _calls("", "isSemver|semver")),
    # ext.Lists (version 3; cel-go ext/lists.go): no version of it before.
    Library(
        (1, 34),
        "the lists extension",
        _calls("sortBy|sort|slice|flatten|reverse|distinct", r"lists\.range"),
    ),
)


# What may be a use of one of LIBRARIES in a file's bytes, however the rule is quoted (a
# line break inside it escaped, in JSON): where none is, no rule of the file uses one. Each
# starts with a word, which the regular expression engine finds fast.
_GAP = rb"(?:\s|\\[nrt])*"
_MENTIONS = [
    re.compile(word)
    for word in (
        rb"isSemver",
        rb"semver\s*\(",
        rb"transformMap",
        rb"transformList",
        rb"lists\.range",
        *(rf"{name}\s*\(".encode() for name in ("sort", "slice", "flatten", "reverse", "distinct")),
        *(
            name + _GAP + rb"\(" + _GAP + rb"\w+" + _GAP + rb"," + _GAP + rb"\w+" + _GAP + rb","
            for name in (rb"all", rb"exists", rb"existsOne", rb"exists_one")
        ),
    )
]


def mentions(data: bytes) -> bool:
    """Whether ``data`` (a file) may hold a rule that uses one of :data:`LIBRARIES`."""
    return any(word.search(data) for word in _MENTIONS)


def missing(text: str, version: Minor) -> list[tuple[Library, str]]:
    """The libraries an environment of compatibility ``version`` lacks that ``text`` uses,
    each with what of it is used."""
    found = []
    for library in LIBRARIES:
        if version < library.since:
            used = library.used_by(text)
            if used is not None:
                found.append((library, used))
    return found


def arrival(library: Library) -> str:
    """When the apiserver compiles rules using ``library``: in rules a CRD held already from
    the minor that introduced it, in new rules from the next."""
    stored, new = library.since, (library.since[0], library.since[1] + 1)
    return (
        f"{library.name} arrives in new CEL rules at {_text(new)}, in rules the CRD held"
        f" already at {_text(stored)}"
    )


def unknown_to(minor: Minor, text: str, stored: bool) -> str | None:
    """Why the apiserver of ``minor`` does not compile ``text`` (a rule or messageExpression
    the CRD it replaces held already, with ``stored``), where a library it lacks is why."""
    found = missing(text, minor if stored else compatibility(minor))
    if not found:
        return None
    library, used = found[0]
    return f"Kubernetes {_text(minor)} does not know {used}: {arrival(library)}"
