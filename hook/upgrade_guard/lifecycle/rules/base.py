"""The lifecycle kind of rule. Each module under lifecycle/rules/ defines one ``RULE``; the
one registry (``upgrade_guard.rules``) lists them with every other rule."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from upgrade_guard.lifecycle.timeline import History, Violation
from upgrade_guard.rules.base import Rule


@dataclass(frozen=True, kw_only=True)
class LifecycleRule(Rule):
    """A pure check over the whole release history (verify-lifecycle); verify turns its
    violations into findings."""

    check: Callable[[History], Iterable[Violation]]
    excusable: ClassVar[bool] = False
