"""Identical changes told once: a change that repeats at many paths (a real upgrade adds
``maxLength: 253`` at 420) is one entry with its count, its CRDs and its first few paths.

Findings are identical when they have the same rule, message, old and new values, severity
and excuse. Only changes found at least twice are grouped; the rest stay single findings.
The verdict and the counts are the findings', never the groups'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from upgrade_guard.findings import Finding

FIRST_PATHS = 3
# How the reports for people name the place of a finding about the CRDs as a whole (the
# release, the tree): it has no CRD of its own (``Finding.crd`` is None).
ALL_CRDS = "(all CRDs)"


def place(finding: Finding) -> str:
    """Where a finding is, for people: its CRD (or ALL_CRDS), version and path."""
    return " ".join(p for p in (finding.crd or ALL_CRDS, finding.version, finding.path) if p)


def first_of(places: list[str]) -> str:
    """The first FIRST_PATHS places and how many more, for one line of a report."""
    more = len(places) - FIRST_PATHS
    return ", ".join(places[:FIRST_PATHS]) + (f" and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class Group:
    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def count(self) -> int:
        return len(self.findings)

    @property
    def crds(self) -> list[str]:
        return sorted({finding.crd for finding in self.findings if finding.crd is not None})

    def places(self, limit: int = FIRST_PATHS) -> list[str]:
        """Where the first ``limit`` findings are: CRD, version and path."""
        return [place(finding) for finding in self.findings[:limit]]

    def notes(self) -> list[str]:
        """Each note of the findings once (the evidence of each place, why it could not be
        checked), with the places of the findings carrying it unless all do."""
        places: dict[str, list[str]] = {}
        for finding in self.findings:
            for note in finding.notes:
                places.setdefault(note, []).append(place(finding))
        return [
            note if len(at) == self.count else f"{note} (at {first_of(at)})"
            for note, at in places.items()
        ]

    def places_line(self) -> str:
        """The first places and how many more, for one line of a report."""
        return first_of([place(finding) for finding in self.findings])


def _key(finding: Finding) -> tuple[str, ...]:
    """What findings share to be one repeated change: a way out worked out for a finding's
    own place (a ``now: `` note, a command naming its CRD) keeps it apart."""

    def canonical(value: object) -> str:
        return json.dumps(value, sort_keys=True, default=str)

    return (
        finding.code,
        finding.message,
        str(finding.severity),
        finding.excused or "",
        canonical(finding.old),
        canonical(finding.new),
        *(note for note in finding.notes if note.startswith("now: ")),
    )


def grouped(findings: tuple[Finding, ...]) -> tuple[list[Group], list[Finding]]:
    """The repeated changes (what still refuses first, most severe first, then the most
    frequent) and the findings that are not repeated, in their order."""
    by_key: dict[tuple[str, ...], list[Finding]] = {}
    for finding in findings:
        by_key.setdefault(_key(finding), []).append(finding)
    groups = sorted(
        (Group(tuple(same)) for same in by_key.values() if len(same) > 1),
        key=lambda group: (
            group.first.excused is not None,
            -group.first.severity,
            -group.count,
            group.first.code,
        ),
    )
    repeated = {id(finding) for group in groups for finding in group.findings}
    return groups, [finding for finding in findings if id(finding) not in repeated]
