"""The shape of a rule. Each module under rules/ defines one ``RULE``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from upgrade_guard.findings import Change, Scope, Severity


@dataclass(frozen=True)
class Rule:
    """A stable code, a default severity, a one-line summary, and a pure comparison.

    ``compare`` receives, by scope:
      CRD       (old: Crd, new: Crd)
      VERSION   (old: Mapping, new: Mapping): one entry of spec.versions on each side
      PROPERTY  (old: Node, new: Node): one value location present on both sides whose
                subtree differs; paths in its changes are relative to it, usually ``()``
    Rules without a compare are computed by the engine itself (their module says how).
    ``handles`` names the schema keywords (PROPERTY) or version fields (VERSION) the rule
    accounts for, whether or not a given change of them is harmful; the engine reports any
    other difference as unclassified. ``covers_subtree`` rules explain everything below the
    path they report, so findings under it are dropped as repeats.
    """

    code: str
    name: str
    severity: Severity
    scope: Scope
    summary: str
    doc: str
    compare: Callable[..., Iterable[Change]] | None = None
    handles: frozenset[str] = frozenset()
    covers_subtree: bool = False
