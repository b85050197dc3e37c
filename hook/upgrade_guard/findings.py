"""The vocabulary every layer shares: severities, findings, outcomes and exit codes."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()


class Harm(enum.Enum):
    """What a rule's finding does to a stored object that holds what the finding points at,
    under the new schema: what the hook's evidence looks for in each stored object."""

    # no stored value decides it: the CRD itself, merges, a required field its default
    # fills, counters, the cluster
    NONE = "none"
    REFUSED_ON_WRITE = "refused on write"  # a CREATE is refused (an UPDATE, unless ratcheted)
    CHANGED_ON_READ = "changed on read"  # it reads back changed: pruned, nulls dropped, defaulted
    BOTH = "both"


class ExitCode(enum.IntEnum):
    SAFE = 0
    REFUSED = 1
    BAD_INPUT = 2
    CLUSTER_UNREACHABLE = 3
    INTERNAL_ERROR = 4


@dataclass(frozen=True)
class Witness:
    """An object the apiserver refuses or reads back changed under the new CRD while the old
    one accepts it (docs/reports.md, "witness"), made from the schemas alone: safe to print.

    ``stored`` is written (CREATE) at ``version`` while the old CRD is live; after the new
    CRD is applied, ``operation`` is a CREATE of a copy of it, or of the body ``object`` it
    was written from, stored as ``read_back`` (``create``), an UPDATE of it to ``object``
    (``update``), a GET returning ``read_back`` (``read``), a write of ``object`` through
    /status, refused, or made before and read back as ``read_back`` (``status``), or
    applying the new CRD itself (``apply-crd``), or, once it is applied, applying the old
    CRD again, a rollback (``apply-old-crd``). ``apiserver`` is what happens ("refuses",
    "reads back changed"), ``message`` a fragment of the apiserver's answer (for a read,
    the patch from stored to read_back as text). ``read_version``: where the operation is
    made at another served version than ``stored`` was written at (conversion None).
    ``stored_under``: ``"new"`` where ``stored`` is written once the new CRD is applied,
    not while the old one is live (UG110: a disagreement only objects written after the
    upgrade meet, at a version or field the old CRD did not have).
    ``applied`` (``apply``, UG215): the server-side applies made while the old CRD is live,
    in order, each ``{"manager": name, "object": body}``, which store ``stored``; after the
    new CRD, the first of those managers applies ``object``: refused (a conflict), or
    allowed and read back as ``read_back``; through /status for a map under status with
    the status subresource (the object created first without status)."""

    version: str
    operation: str
    stored: Mapping[str, Any]
    apiserver: str
    message: str
    object: Mapping[str, Any] | None = None
    read_back: Mapping[str, Any] | None = None
    read_version: str | None = None
    stored_under: str | None = None
    applied: tuple[Mapping[str, Any], ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "operation": self.operation,
            "stored": self.stored,
            "object": self.object,
            "apiserver": self.apiserver,
            "message": self.message,
            "read_back": self.read_back,
            "read_version": self.read_version,
            "stored_under": self.stored_under,
            "applied": None if self.applied is None else list(self.applied),
        }


@dataclass(frozen=True)
class Change:
    """What a rule reports before the engine knows its CRD, version and final severity.

    ``ratchetable``: the apiserver's validation ratcheting (Kubernetes 1.30+) accepts an update
    that leaves a failing value unchanged. ``status_written``: the version has the status
    subresource and a /status write checks this too (a CEL rule anywhere, a constraint under
    status), which no apiserver before 1.33 ratchets. ``since``: the apiserver enforces this
    only from that Kubernetes version on, so with an older ``--kube-version`` it is no
    finding.
    ``severity``: this change's default when it is milder than the rule's; the policy's
    setting for the rule still applies to every change. ``notes``: what the finding says
    besides its message. ``excused``: the check's own way out that applies (a lifecycle
    break declared for the release, a restart record), used where no declared break is.
    ``witness``: an object the apiserver refuses or reads back changed for this change
    (None where none was built, or none was looked for).
    """

    path: tuple[str, ...] | None
    message: str
    old: Any = None
    new: Any = None
    ratchetable: bool = False
    status_written: bool = False
    since: tuple[int, int] | None = None
    severity: Severity | None = None
    notes: tuple[str, ...] = ()
    excused: str | None = None
    witness: Witness | None = None


@dataclass(frozen=True)
class Finding:
    """What the judge made of a change. ``crd``: the CRD it is about, or None for a finding
    about the CRDs as a whole (the release the hook judges, the tree verify-history does)."""

    code: str
    rule: str
    severity: Severity
    crd: str | None
    version: str | None
    path: str | None
    message: str
    old: Any = None
    new: Any = None
    excused: str | None = None
    notes: tuple[str, ...] = ()
    location: tuple[str, int] | None = None  # (file, line) in the new CRD file, when known
    # An error of a CRD rule: True with the witness that shows its harm, False where none
    # could be built (it stays an error, counted unproven); None for any other finding (a
    # ratcheted warning keeps the witness of the error it was).
    witness: Witness | None = None
    proven: bool | None = None

    @property
    def refuses(self) -> bool:
        return self.severity is Severity.ERROR and self.excused is None


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    crds_compared: int = 0
    policy: str = "none (built-in defaults)"  # which policy judged, as reports name it
    # What was compared, beyond the findings (verify-history's baseline, schema versions
    # and counters): lines for people, shown above the findings, and the same for machines,
    # keys the JSON report carries beside verdict and summary.
    facts: tuple[tuple[str, str], ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        return not any(finding.refuses for finding in self.findings)

    @property
    def verdict(self) -> str:
        return "safe" if self.safe else "unsafe"

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.SAFE if self.safe else ExitCode.REFUSED
