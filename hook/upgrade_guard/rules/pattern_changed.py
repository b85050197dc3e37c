"""UG211 pattern-changed

What it flags: a pattern added to a string field, or changed, that refuses a string the field
accepted before. The apiserver accepts a string where the pattern matches anywhere in it (Go's
regexp, RE2); RE2 patterns are regular, so whether the new one accepts every string the old
one did is decided (upgrade_guard/regex_inclusion.py), and the finding names a string now
refused. Where that is not decided (multi-line ``^`` or ``$``, ``\\b``, a pattern not read, an
automaton past its caps), every change counts, as a refusal.

Why it matters: stored strings that do not match the new pattern can no longer be created as
they are, and fail every update before Kubernetes 1.30 (ratcheted from 1.30).

Allowed: the pattern removed, or changed or added so that it accepts every string accepted
before (an alternative added, a class widened, a repeat loosened, an anchor dropped).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.apiserver import regex_inclusion
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location, short


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = old.get("pattern"), new.get("pattern")
    if after is None or before == after:
        return
    refusal = regex_inclusion.refusal(before, after)
    if refusal is None:
        return
    if refusal.example is None:
        note = f"not compared with what it accepted before: {refusal.undecided}"
    else:
        note = f"refuses {short(refusal.example)}, which was accepted before"
    verb = "added" if before is None else "changed"
    yield Change((), f"pattern {verb}: {after}", before, after, ratchetable=True, notes=(note,))


RULE = PropertyRule(
    code="UG211",
    name="pattern-changed",
    severity=Severity.ERROR,
    summary="A pattern was added or changed so that it refuses strings accepted before.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"pattern"}),
    harm=Harm.REFUSED_ON_WRITE,
)
