"""The one judge: (changes, policy, context) -> Outcome, for every command.

Every check (the schema rules, the CRD and version rules, verify-history's and the hook's
checks, the lifecycle rules) reports what it finds as changes placed in a CRD, and only
here does the policy turn them into findings: each rule's severity or the policy's
override, the strict profile, ratcheting on the cluster's Kubernetes version, the declared
breaks (scoped to the release the comparison crosses, with a note on each finding a break
of another release would have excused, and UG902 for a break that excuses nothing), and
the order of the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from upgrade_guard import schema
from upgrade_guard.apiserver import minors
from upgrade_guard.findings import Change, Finding, Outcome, Severity
from upgrade_guard.json_schema import did_you_mean
from upgrade_guard.policy import DEFAULT_POLICY, DeclaredBreak, Policy, glob_pattern
from upgrade_guard.rules import acceptance_unused, declared_break_unused, validation_rule_added
from upgrade_guard.rules.kinds import Rule, Subject, SubjectCheck
from upgrade_guard.subjects import Release

RATCHETING_SINCE = (1, 30)
# The CRD rules (the schema comparison's): their errors carry a witness, or are unproven.
_CRD_RULE_CODES = ("UG1", "UG2")


@dataclass(frozen=True)
class Placed:
    """A rule's change placed in its CRD (None: the CRDs as a whole) and version, before the
    policy is applied. ``node`` is where a property rule looked; ``step`` orders the changes
    of one CRD where a check runs over a history (the release a lifecycle rule found it at)."""

    rule: Rule
    crd: str | None
    version: str | None
    path: schema.Path | None
    change: Change
    node: schema.Path | None = None
    step: int = 0


def run(checks: Iterable[SubjectCheck[Subject]], subject: Subject) -> tuple[Placed, ...]:
    """What each check finds in its command's subject, in the order of the checks."""
    return tuple(
        Placed(check, where, None, None, change)
        for check in checks
        for where, change in check.check(subject)
    )


@dataclass(frozen=True)
class Changes:
    """What the rules find before the policy judges it: the changes in CRD name order, and
    how many CRDs were compared. ``unchanged``: the CRDs whose spec is the same on both sides
    (a release already applied), ``changed``: the others either side has. Changes of
    disjoint sets of names add up (``merged``) to the changes of all of them."""

    raw: tuple[Placed, ...]
    crds_compared: int = 0
    unchanged: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()

    def merged(self, other: Changes) -> Changes:
        raw = sorted(self.raw + other.raw, key=lambda item: item.crd or "")  # stable
        return Changes(
            tuple(raw),
            self.crds_compared + other.crds_compared,
            self.unchanged | other.unchanged,
            self.changed | other.changed,
        )

    def idle(self, declared: DeclaredBreak) -> bool:
        """Whether a break is for CRDs this comparison finds unchanged only: the release it
        was declared for is applied (the live CRD already equals the chart's), so it excuses
        nothing here and is not stale either (a value change, a rollback to the deployed
        revision). A break for a CRD that did change and excuses nothing is."""
        pattern = glob_pattern(declared.crd)
        return any(pattern.match(name) for name in self.unchanged) and not any(
            pattern.match(name) for name in self.changed
        )


ACCEPTED = "ACCEPTED by the cluster admin"


@dataclass(frozen=True)
class Acceptance:
    """A finding a cluster admin accepts at upgrade time (``upgrade-guard.accept``), named
    exactly (code, CRD, version, path: no globs; no CRD for a finding about the CRDs as a
    whole), for one chart version only, so ``helm upgrade --reuse-values`` cannot carry it
    into the next release."""

    chart: str
    code: str
    crd: str | None = None
    version: str | None = None
    path: str | None = None

    def accepts(self, finding: Finding) -> bool:
        return (finding.code, finding.crd, finding.version, finding.path) == (
            self.code,
            self.crd,
            self.version,
            self.path,
        )

    def __str__(self) -> str:
        where = " ".join(p for p in (self.crd, self.version, self.path) if p)
        return f"{self.code} {where} for chart {self.chart}"


class Evidence(Protocol):
    """What the stored objects say of the findings (the hook's, read from the cluster)."""

    def weighed(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings, in the same order, with what the objects say of each."""
        ...


@dataclass(frozen=True)
class Context:
    """What the judgement depends on besides the policy: the cluster's Kubernetes version
    (ratcheting, and rules the apiserver enforces only since a version), the release a
    comparison of stamped CRD sets crosses, the cluster admin's acceptances and the evidence
    of the stored objects. Without a release every declared break applies as written; with
    one, breaks with a schema-version apply only when it ships with it."""

    kube_version: tuple[int, int] | None = None
    release: Release | None = None
    chart_version: str | None = None
    acceptances: tuple[Acceptance, ...] = ()
    evidence: Evidence | None = None


def judge(
    changes: Changes, policy: Policy = DEFAULT_POLICY, context: Context = Context()
) -> Outcome:
    """The findings the policy makes of changes, in report order: each its rule's severity
    or the policy's, ratcheted on the cluster's version, excused by a declared break, then
    weighed by the stored objects, and last accepted by the cluster admin (who accepts the
    finding as the report printed it)."""
    active, scoped_out = _declared_breaks(policy, context.release)
    judged = [
        (item, finding)
        for item in changes.raw
        if (finding := _finding(item, policy, context.kube_version)) is not None
    ]
    excusable = [finding for item, finding in judged if item.rule.excusable]
    excused_by = {id(f): declared for f in excusable if (declared := _excuse(f, active))}
    ordered: list[tuple[int, Finding]] = []
    for item, finding in judged:
        declared = excused_by.get(id(finding))
        if declared is not None:
            finding = replace(finding, excused=declared.reason)
        else:
            if item.rule.excusable and context.release is not None:
                finding = _noted(finding, scoped_out, context.release)
            if item.change.excused is not None:
                finding = replace(finding, excused=item.change.excused)
        ordered.append((item.step, finding))
    used = {id(declared) for declared in excused_by.values()}
    unused = [d for d in active if id(d) not in used and not changes.idle(d)]
    ordered.extend((0, finding) for finding in _unused(unused, excusable, policy))
    ordered.sort(key=_step_order)
    if context.evidence is not None:
        weighed = context.evidence.weighed([finding for _, finding in ordered])
        ordered = [(step, finding) for (step, _), finding in zip(ordered, weighed, strict=True)]
    ordered = _accepted(ordered, changes, context)
    ordered.sort(key=_step_order)
    return Outcome(
        findings=tuple(_proved(finding) for _, finding in ordered),
        crds_compared=changes.crds_compared,
        policy=policy.source,
    )


def _proved(finding: Finding) -> Finding:
    """Whether an error of a CRD rule is proven (it carries a witness), once its severity is
    final (evidence may make a ratcheted warning an error again, or an error a warning)."""
    if finding.severity is Severity.ERROR and finding.code.startswith(_CRD_RULE_CODES):
        return replace(finding, proven=finding.witness is not None)
    return finding


def _step_order(pair: tuple[int, Finding]) -> tuple[Any, ...]:
    step, finding = pair
    return (finding.crd or "", step, *report_order(finding)[1:])


def _accepted(
    ordered: list[tuple[int, Finding]], changes: Changes, context: Context
) -> list[tuple[int, Finding]]:
    """The refusals a cluster admin accepted for this chart version marked so, and each
    acceptance that accepts nothing (another chart version, or no such finding where its
    CRD changes) a refusal of its own."""
    if not context.acceptances:
        return ordered
    current = [a for a in context.acceptances if a.chart == context.chart_version]
    used: set[int] = set()
    marked: list[tuple[int, Finding]] = []
    for step, finding in ordered:
        taken = next((a for a in current if finding.refuses and a.accepts(finding)), None)
        if taken is not None:
            used.add(id(taken))
            finding = replace(finding, excused=f"{ACCEPTED} for chart {taken.chart}")
        marked.append((step, finding))
    rule = acceptance_unused.RULE
    for acceptance in context.acceptances:
        if id(acceptance) in used:
            continue
        if acceptance.chart != context.chart_version:
            why = (
                f"it was given for chart {acceptance.chart}, this is chart {context.chart_version}"
            )
        elif acceptance.crd in changes.unchanged:
            continue  # the upgrade it was given for is applied: idle
        else:
            why = "no finding of this upgrade has that code, CRD, version and path"
        message = f"acceptance {acceptance} accepts nothing: {why}"
        where = (acceptance.crd, acceptance.version, acceptance.path)
        marked.append((0, Finding(rule.code, rule.name, rule.severity, *where, message)))
    return marked


def report_order(finding: Finding) -> tuple[Any, ...]:
    """By CRD (first what is about the CRDs as a whole); within one, what still refuses
    first, most severe first; then by place."""
    return (
        finding.crd or "",
        finding.excused is not None,
        -finding.severity,
        finding.version or "",
        finding.path or "",
        finding.code,
        finding.message,
    )


def _declared_breaks(
    policy: Policy, release: Release | None
) -> tuple[tuple[DeclaredBreak, ...], tuple[DeclaredBreak, ...]]:
    """The breaks that apply, and those left out as belonging to other releases."""
    if release is None:
        return policy.declared_breaks, ()
    active = tuple(
        b
        for b in policy.declared_breaks
        if b.schema_version is None or release.ships(b.schema_version)
    )
    return active, tuple(b for b in policy.declared_breaks if b not in active)


def _finding(item: Placed, policy: Policy, kube_version: tuple[int, int] | None) -> Finding | None:
    severity, strict_notes = policy.judged(
        item.rule.code, item.change.severity or item.rule.severity
    )
    since = item.change.since
    if severity is None or (
        since is not None and kube_version is not None and kube_version < since
    ):
        return None
    notes = list(strict_notes)
    ratcheting = kube_version is not None and kube_version >= RATCHETING_SINCE
    if item.change.ratchetable and ratcheting and not policy.strict and severity is Severity.ERROR:
        major, minor = kube_version or RATCHETING_SINCE
        node = item.node if item.node is not None else item.path
        where = "the value" if node is None else schema.render_path(node)
        if item.change.status_written and (major, minor) < minors.STATUS_RATCHETED:
            notes.append(_status_not_ratcheted(item, (major, minor), where))
        else:
            severity = Severity.WARNING
            notes.append(
                f"ratcheted on Kubernetes {major}.{minor}: updates that leave {where} unchanged"
                " pass; new objects and changed values must satisfy it"
            )
    return Finding(
        code=item.rule.code,
        rule=item.rule.name,
        severity=severity,
        crd=item.crd,
        version=item.version,
        path=None if item.path is None else schema.render_path(item.path),
        message=item.change.message,
        old=item.change.old,
        new=item.change.new,
        notes=(*item.change.notes, *notes),
        witness=item.change.witness,
    )


def _status_not_ratcheted(item: Placed, version: tuple[int, int], where: str) -> str:
    """Why a change ratcheting would excuse refuses on ``version``: its /status writes."""
    cel = item.rule.code == validation_rule_added.RULE.code
    checked = "every CEL rule of the object" if cel else "status"
    fixed = minors.STATUS_RATCHETED
    return (
        f"not ratcheted on a /status write on Kubernetes {version[0]}.{version[1]}: updates"
        f" that leave {where} unchanged pass, but a /status write checks {checked} without"
        f" ratcheting until {fixed[0]}.{fixed[1]} (kubernetes#129506), so stored objects that"
        " fail it cannot have their status written (their controller's writes fail)"
    )


def _excuse(finding: Finding, breaks: Iterable[DeclaredBreak]) -> DeclaredBreak | None:
    """The first declared break that excuses the finding."""
    return next((declared for declared in breaks if declared.excuses(finding)), None)


def _noted(finding: Finding, scoped_out: Iterable[DeclaredBreak], release: Release) -> Finding:
    """The finding with a note for each break of another release that would excuse it."""
    notes = tuple(
        f"declared break {b} not applied: {release.why_not()}"
        for b in scoped_out
        if b.excuses(finding)
    )
    return replace(finding, notes=finding.notes + notes) if notes else finding


def _unused(
    breaks: Iterable[DeclaredBreak], findings: list[Finding], policy: Policy
) -> Iterable[Finding]:
    rule = declared_break_unused.RULE
    severity = policy.severity_of(rule.code, rule.severity)
    if severity is None:
        return
    for declared in breaks:
        yield Finding(
            code=rule.code,
            rule=rule.name,
            severity=severity,
            crd=declared.crd,
            version=declared.version,
            path=declared.path,
            message=f"declared break {declared} matches no finding of this change"
            + _nearest(declared, findings),
        )


def _nearest(declared: DeclaredBreak, findings: list[Finding]) -> str:
    """A hint for a declared break that matched nothing: the nearest CRD name when no finding
    is in a CRD it names, else the nearest path among that CRD's findings of its rule."""
    if any(declared.excuses(f) for f in findings):
        return " (its findings are excused by an earlier declared break)"
    named = {f.crd for f in findings if f.crd is not None}
    in_crd = [f for f in findings if f.crd in named and glob_pattern(declared.crd).match(f.crd)]
    if not in_crd:
        return did_you_mean(declared.crd, named)
    same_rule = [f.path for f in in_crd if f.code == declared.code and f.path]
    if declared.path is None or not same_rule:
        return ""
    return did_you_mean(declared.path, set(same_rule))
