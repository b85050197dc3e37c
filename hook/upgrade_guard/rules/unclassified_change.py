"""UG901 unclassified-change

What it flags: any difference between the old and new CRD that no other rule accounts for
(uniqueItems, patternProperties, a scale subresource, selectableFields, ...), one finding per
schema path or version field, naming the keywords that differ.

Why it matters: the guard only lets through what it understands. Documentation (description,
title, example, externalDocs) and printer columns are never findings.

Allowed: documentation-only changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from upgrade_guard import schema
from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import EngineRule
from upgrade_guard.subjects import CrdPair, VersionPair

# Fields that say how a version is shown or announced, never what is stored or accepted.
_VERSION_FIELDS_IGNORED = frozenset(
    {
        "name",
        "served",
        "storage",
        "schema",
        "additionalPrinterColumns",
        "deprecated",
        "deprecationWarning",
    }
)


def leftover(old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str]) -> Change | None:
    """The keys, of those given, whose values differ: what no rule accounts for."""
    differing = sorted(key for key in keys if not schema.same_value(old.get(key), new.get(key)))
    if not differing:
        return None
    return Change(
        (),
        f"unclassified change of {', '.join(differing)}",
        {key: old.get(key) for key in differing if key in old},
        {key: new.get(key) for key in differing if key in new},
    )


def in_spec(pair: CrdPair, handled: frozenset[str]) -> Iterator[Change]:
    """The top-level spec fields no CRD rule handles that differ."""
    old, new = pair.old.spec, pair.new.spec
    left = leftover(old, new, (old.keys() | new.keys()) - handled)
    if left is not None:
        yield Change(None, left.message, left.old, left.new)


def _version_fields(version: Mapping[str, Any]) -> dict[str, Any]:
    """A version entry with each subresource as a field of its own (subresources.scale)."""
    fields = {key: value for key, value in version.items() if key != "subresources"}
    for name, value in (version.get("subresources") or {}).items():
        fields[f"subresources.{name}"] = value
    return fields


def in_version(pair: VersionPair, handled: frozenset[str]) -> Iterator[Change]:
    """The fields of a version entry no version rule handles that differ (documentation and
    how the version is announced aside)."""
    before, after = _version_fields(pair.old), _version_fields(pair.new)
    keys = (before.keys() | after.keys()) - _VERSION_FIELDS_IGNORED - handled
    left = leftover(before, after, keys)
    if left is not None:
        yield Change(None, left.message, left.old, left.new)


RULE = EngineRule(
    code="UG901",
    name="unclassified-change",
    severity=Severity.ERROR,
    summary="A change no rule accounts for.",
    doc=__doc__ or "",
)
