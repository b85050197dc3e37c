"""UG108 conversion-strategy-changed

What it flags: spec.conversion.strategy changed (None and Webhook) where the switch changes
what objects meet at another version, or what reaching it depends on. The versions objects
meet are the new CRD's served versions and the versions either side records as stored
(status.storedVersions, the storage version).

Why it matters: to None, an object written or stored at one of those versions and read or
written at another is converted by rewriting apiVersion only, then pruned, defaulted and
validated by the other version's schema alone: where two of them have schemas that differ
(documentation aside), objects written at one read back changed at the other, or fail its
validation there. The finding names each such pair and the first path where their schemas
differ. To Webhook, every read and write that crosses versions (a
served version other than the storage version, objects stored at another version) now calls
a webhook that must be running before the CRD changes. Webhook client settings (service,
caBundle) are not compared: they say where the webhook runs, not what is stored.

Allowed: the same strategy on both sides. A switch that changes nothing stored or read is
info: to None where the versions objects meet have the same schema (or there is one), to
Webhook where objects meet the storage version only (no request calls the webhook yet).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from upgrade_guard import schema
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule, listed
from upgrade_guard.subjects import CrdPair

_VALUES_INSIDE = frozenset(schema.VALUE_KEYWORDS)


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    before, after = old.conversion_strategy, new.conversion_strategy
    if before == after:
        return
    changed = f"conversion strategy changed from {before} to {after}"
    met = _versions_met(old, new)
    if after == "None":
        differing = [
            f"{first} and {second} (at {schema.render_path(path)})"
            for first, second, path in _differing_pairs(met, new.served_versions)
        ]
        if differing:
            yield Change(
                None,
                f"{changed}, which converts by rewriting apiVersion only, while the schemas of"
                f" {listed(differing)} differ: an object written at one is pruned, defaulted and"
                " validated by the other's schema alone when read or written there",
                before,
                after,
            )
            return
        agreeing = (
            f"{listed(list(met))} have the same schema (documentation aside), so objects read"
            " back as written at any of them"
            if len(met) > 1
            else f"objects meet {listed(list(met))} only, so nothing is converted"
        )
        yield Change(
            None,
            f"{changed}: {agreeing}",
            before,
            after,
            severity=Severity.INFO,
        )
        return
    crossing = [name for name in met if name != new.storage_version]
    if crossing:
        yield Change(
            None,
            f"{changed}: every read and write that crosses from {listed(crossing)} to the"
            f" storage version {new.storage_version} now calls the webhook, which must be"
            " running before the CRD changes",
            before,
            after,
        )
        return
    yield Change(
        None,
        f"{changed}: objects meet the storage version {new.storage_version} only, so no"
        " request calls the webhook until another version is served",
        before,
        after,
        severity=Severity.INFO,
    )


def _versions_met(old: Crd, new: Crd) -> dict[str, schema.Node]:
    """Each version objects are read or written at (the new CRD's served ones) or stored at
    (either side's status.storedVersions and storage version), with its schema: the new
    CRD's, or the old one's for a stored version the new CRD no longer lists."""
    met = {name: new.schemas[name] for name in new.served_versions}
    for name in [*old.stored_versions, *new.stored_versions]:
        if name in met:
            continue
        if name in new.versions:
            met[name] = new.schemas[name]
        elif name in old.versions:
            met[name] = old.schemas[name]
    return met


def _differing_pairs(
    met: dict[str, schema.Node], served: list[str]
) -> Iterator[tuple[str, str, schema.Path]]:
    """Each pair of versions, one of them served (read at), whose schemas differ, with where."""
    for first, second in combinations(met, 2):
        if first in served or second in served:
            path = _first_difference(met[first], met[second])
            if path is not None:
                yield first, second, path


def _first_difference(first: schema.Node, second: schema.Node) -> schema.Path | None:
    """The first location (parents first) where two schemas say different things of values:
    a keyword other than documentation set differently, or a value one declares and the
    other does not; None where they agree."""
    for at in schema.paired_locations(first, second):
        if schema.differing_keywords(at.old, at.new) - _VALUES_INSIDE:
            return at.path
        apart = at.old_children.keys() ^ at.new_children.keys()
        if apart:
            return at.path + (min(apart),)
    return None


RULE = CrdRule(
    code="UG108",
    name="conversion-strategy-changed",
    severity=Severity.ERROR,
    summary="The conversion strategy changed where schemas differ or reads cross versions.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"conversion"}),
)
