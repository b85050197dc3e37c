"""UG112 scale-subresource-changed

What it flags: a version's scale subresource removed, or its specReplicasPath,
statusReplicasPath or labelSelectorPath changed or removed.

Why it matters: HorizontalPodAutoscalers, `kubectl scale` and PodDisruptionBudgets read and
write replicas through /scale; with the subresource gone they fail, and with a path moved they
read or set a field the stored objects do not hold where expected.

Allowed: the scale subresource added, or a labelSelectorPath added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import VersionRule
from upgrade_guard.subjects import VersionPair


def _scale(version: Mapping[str, Any]) -> Mapping[str, Any] | None:
    scale: Mapping[str, Any] | None = (version.get("subresources") or {}).get("scale")
    return scale


def compare(pair: VersionPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    before, after = _scale(old), _scale(new)
    if before is None:
        return
    if after is None:
        yield Change(None, "scale subresource removed", dict(before), None)
        return
    for key in ("specReplicasPath", "statusReplicasPath", "labelSelectorPath"):
        if key in before and before.get(key) != after.get(key):
            yield Change(
                None,
                f"scale {key} changed: {before.get(key)} -> {after.get(key)}",
                before.get(key),
                after.get(key),
            )


RULE = VersionRule(
    code="UG112",
    name="scale-subresource-changed",
    severity=Severity.ERROR,
    summary="The scale subresource was removed or its paths changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"subresources.scale"}),
)
