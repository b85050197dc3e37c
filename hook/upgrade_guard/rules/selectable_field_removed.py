"""UG111 selectable-field-removed

What it flags: a selectableFields entry (a jsonPath clients may use in field selectors) that a
served version no longer offers.

Why it matters: list and watch calls that select on that field are refused with 400 Bad
Request, so controllers and scripts filtering on it stop working. Stored objects are not
touched.

Allowed: selectable fields added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import VersionRule
from upgrade_guard.subjects import VersionPair


def _paths(version: Mapping[str, Any]) -> list[str]:
    return [str(entry.get("jsonPath")) for entry in version.get("selectableFields") or []]


def compare(pair: VersionPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    kept = set(_paths(new))
    removed = [path for path in _paths(old) if path not in kept]
    if removed:
        yield Change(None, f"selectable fields removed: {', '.join(removed)}", removed, None)


RULE = VersionRule(
    code="UG111",
    name="selectable-field-removed",
    severity=Severity.ERROR,
    summary="A field selectable in field selectors was removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"selectableFields"}),
)
