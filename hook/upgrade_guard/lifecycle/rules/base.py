"""The shape of a lifecycle rule. Each module under lifecycle/rules/ defines one ``RULE``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import History, Violation


@dataclass(frozen=True)
class LifecycleRule:
    """A stable code, a default severity, a one-line summary, and a pure check over the
    whole release history; the registry turns its violations into findings."""

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    check: Callable[[History], Iterable[Violation]]
