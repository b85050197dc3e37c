"""The kinds of rule. Each module under rules/ defines one ``RULE`` of one kind.

Every kind compares a typed subject (``subjects``) and yields changes, which the one judge
(``judging``) makes findings of. The schema comparison's: a CRD rule gets one CRD on both
sides (``CrdPair``), a version rule one entry of spec.versions (``VersionPair``), a property
rule one schema node (``schema.Location``); each of them names in ``handles`` what it
accounts for, whether or not a given change of it is harmful, and any other difference is
unclassified (UG901), so the list of what the comparison covers is the union of the rules'
``handles``. A check (``SubjectCheck``) gets the whole subject of its command: both CRD sets
(a CRD removed), the hook's, verify-history's, the roles'; ``judging.run`` runs them all
alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.subjects import (
    CrdPair,
    CrdSets,
    HistorySubject,
    HookSubject,
    RoleSubject,
    VersionPair,
)

Subject = TypeVar("Subject")

SHOWN_NAMES = 5


def listed(names: Sequence[str]) -> str:
    """The first names, and how many more."""
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A stable code, a kebab-case name (the policy takes either), a default severity, a
    one-line summary, and the documentation ``explain`` prints (the module docstring)."""

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    # How validation ratcheting (Kubernetes 1.30+) treats its findings, for the docs' rule
    # tables: "yes", or why not; empty where it does not apply.
    ratcheting: str = ""
    # What the person running helm can do now about a refusal, and what the chart's authors
    # should change, as the hook's report says them; empty: the schema finding's (set the
    # field on the objects named, or accept it; declare it or keep the live schema).
    way_out: str = ""
    author: str = ""
    # What a finding does to the stored objects holding what it points at; the hook judges
    # stored objects for the findings of the rules with a harm (schema node rules only).
    harm: Harm = Harm.NONE
    # Whether a declared break can excuse its findings: those of the schema comparison can;
    # verify-history's, the hook's and the lifecycle's checks have ways out of their own.
    excusable: ClassVar[bool] = True

    def __reduce__(self) -> tuple[Callable[[str], Rule], tuple[str]]:
        # A rule crosses a process boundary (diffing in two processes) as its code.
        return _registered, (self.code,)


def _registered(code: str) -> Rule:
    from upgrade_guard.rules import BY_CODE  # the registry imports every rule, so not on top

    return BY_CODE[code]


@dataclass(frozen=True, kw_only=True)
class CrdRule(Rule):
    """Compares the old and the new CRD; ``handles`` names top-level spec fields."""

    compare: Callable[[CrdPair], Iterable[Change]]
    handles: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class VersionRule(Rule):
    """Compares one entry of spec.versions on each side; ``handles`` names its fields
    (a subresource as ``subresources.<name>``)."""

    compare: Callable[[VersionPair], Iterable[Change]]
    handles: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class PropertyRule(Rule):
    """Compares one value location present on both sides whose subtree differs; paths in
    its changes are relative to it, usually ``()``. ``handles`` names schema keywords, and
    the rule finds nothing where none of them differs (``schema.differing_keywords``): the
    engine runs it only where one does. A ``covers_subtree`` rule explains everything below
    the path it reports, so findings under it are dropped as repeats."""

    compare: Callable[[schema.Location], Iterable[Change]]
    handles: frozenset[str]
    harm: Harm = field()  # required here: each says it, NONE included
    covers_subtree: bool = False


@dataclass(frozen=True, kw_only=True)
class EngineRule(Rule):
    """A finding the engine makes as it walks the schemas (served versions that disagree,
    what no rule handles) or the judge makes (an unused declared break or acceptance); its
    module holds what the finding says, its docstring when."""


@dataclass(frozen=True, kw_only=True)
class SubjectCheck(Rule, Generic[Subject]):
    """A check of a command's whole subject: ``check`` yields each change with what it is
    about (a CRD, a role; None for the CRDs as a whole)."""

    check: Callable[[Subject], Iterable[tuple[str | None, Change]]]


@dataclass(frozen=True, kw_only=True)
class CrdSetCheck(SubjectCheck[CrdSets]):
    """A check of the new CRD set against the old one as sets (a CRD removed)."""


@dataclass(frozen=True, kw_only=True)
class HistoryCheck(SubjectCheck[HistorySubject]):
    """A check verify-history makes of the schema version and the other counters between a
    baseline commit and the candidate (None: the tree as a whole)."""

    excusable: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class HookCheck(SubjectCheck[HookSubject]):
    """A check the cluster hook makes besides the schema comparison: the chart against its
    images and against what the cluster holds (None: the release as a whole)."""

    excusable: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class RoleCheck(SubjectCheck[RoleSubject]):
    """Compares the operator's ClusterRoles and Roles between releases (diff, the hook) and
    with the live ClusterRoles (the hook), by ``Role.key``."""


@dataclass(frozen=True, kw_only=True)
class LifecycleRule(Rule):
    """A pure check over the whole release history (verify-lifecycle); verify turns its
    violations into findings."""

    check: Callable[[ReleaseHistory], Iterable[LifecycleViolation]]
    excusable: ClassVar[bool] = False
