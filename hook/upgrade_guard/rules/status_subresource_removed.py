"""UG109 status-subresource-removed

What it flags: a version that had subresources.status and no longer has it.

Why it matters: the operator's writes to /status start failing with 404, and without the
subresource a main-resource update may overwrite .status, so users can change what the
controller reported.

Allowed: the status subresource added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import VersionRule
from upgrade_guard.subjects import VersionPair


def _has_status(version: Mapping[str, Any]) -> bool:
    return "status" in (version.get("subresources") or {})


def compare(pair: VersionPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    if _has_status(old) and not _has_status(new):
        yield Change(None, "status subresource removed")


RULE = VersionRule(
    code="UG109",
    name="status-subresource-removed",
    severity=Severity.ERROR,
    summary="The status subresource was removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"subresources.status"}),
)
