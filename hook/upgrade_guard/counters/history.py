"""verify-history's judgement: a candidate CRD set against its baseline, counters included.

Pure: both sides arrive as CRDs already read (and, for ``equal-when-unchanged`` counters, the
digest of their files). Made into one subject (``subjects.HistorySubject``), read by every
``HistoryCheck`` rule under rules/ (each code below is one module), and judged once with the
engine's changes:

Schema version (annotation ``<prefix>crd-schema-version`` on every CRD)
  - every candidate CRD carries a canonical positive decimal (UG701), the same one (UG702),
    and the digest of its own spec (UG703; ``upgrade-guard stamp`` writes both);
  - the schema changed (the map CRD name -> digest differs: a spec changed, a CRD was added
    or removed) -> the candidate version is strictly greater (UG704); unchanged -> equal
    (UG705);
  - a candidate version below the baseline's is a rollback (UG706), admitted only by a
    restart record naming that baseline version and the digest of every baseline CRD,
    exactly; its engine findings are then excused by the restart;
  - a baseline without schema versions (no CRD annotated, or no CRDs at all) is a first
    adoption: the candidate version must be 1 (UG707).
Engine
  - the engine compares the normalized specs (``digest.normalized_spec``), storage
    version only; its findings refuse unless a declared break with a ``schema-version`` in
    (baseline version, candidate version] excuses them (first adoption: (0, candidate]). A
    break for another version excuses nothing; one that matches no finding is UG902. Breaks
    without ``schema-version`` are not used here (a note says so). A removed CRD is the
    engine's UG101, refused unless declared; an added CRD is allowed.
Other counters (policy ``counters``; ``controller-state-version`` is monotonic by default
whenever a CRD on either side carries it)
  - every candidate CRD carries the same canonical value (UG708), and so does every
    webhook configuration in the tree that carries a counter on either side;
  - ``monotonic``: never below the baseline value (UG709);
  - ``equal-when-unchanged``: when the digest of its files changed, strictly above the
    baseline value (UG710); when not, equal (UG711). A counter the baseline lacks starts
    freely.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from upgrade_guard import engine, rules
from upgrade_guard.counters import digest
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Outcome
from upgrade_guard.judging import Context, judge, run
from upgrade_guard.policy import (
    CONTROLLER_STATE_VERSION,
    SCHEMA_DIGEST,
    SCHEMA_VERSION,
    Counter,
    Policy,
    Restart,
)
from upgrade_guard.rules.kinds import HistoryCheck
from upgrade_guard.subjects import (
    HistorySubject,
    Release,
    Side,
    digest_changes,
    stamped,
    stamped_number,
)

_HISTORY_CHECKS = rules.of_kind(HistoryCheck)


@dataclass(frozen=True)
class CounterState:
    name: str
    rule: str
    before: int | None
    after: int | None
    files_changed: bool | None = None


@dataclass(frozen=True)
class VerifiedHistory:
    """What verify-history compared and found: baseline and candidate, schema versions,
    counters, and the judged outcome."""

    baseline: str
    candidate: str
    source: str
    baseline_version: int | None
    candidate_version: int | None
    schema_changed: bool
    changes: tuple[str, ...]
    first_adoption: bool
    restart: Restart | None
    counters: tuple[CounterState, ...]
    outcome: Outcome
    notes: tuple[str, ...] = ()

    @property
    def safe(self) -> bool:
        return self.outcome.safe


def digests_of(crds: Mapping[str, Crd]) -> dict[str, str]:
    return {name: digest.spec_digest(crd.spec) for name, crd in crds.items()}


def normalized(crds: Mapping[str, Crd]) -> dict[str, Crd]:
    """The CRDs with their specs as the digest sees them, for the engine."""
    return {
        name: Crd({**crd.raw, "spec": digest.normalized_spec(crd.spec)}, crd.source)
        for name, crd in crds.items()
    }


def _counters_in_play(policy: Policy, baseline: Side, candidate: Side) -> list[Counter]:
    counters = list(policy.counters)
    if all(counter.name != CONTROLLER_STATE_VERSION for counter in counters):
        key = policy.annotation(CONTROLLER_STATE_VERSION)
        carried = any(
            key in crd.annotations for side in (baseline, candidate) for crd in side.crds.values()
        )
        if carried:
            counters.append(Counter(CONTROLLER_STATE_VERSION, "monotonic", key))
    return counters


def next_schema_version(
    baseline: Mapping[str, Crd], candidate: Mapping[str, Crd], policy: Policy
) -> tuple[int, str]:
    """The schema version verify-history expects of candidate, and why: 1 on a first
    adoption, the baseline's + 1 when the normalized specs changed, the baseline's otherwise."""
    key = policy.annotation(SCHEMA_VERSION)
    stamped = [n for n in (stamped_number(c, key) for c in baseline.values()) if n]
    if not stamped:
        return 1, "first adoption: the baseline carries no schema version"
    before = max(stamped)
    changes = digest_changes(digests_of(baseline), digests_of(candidate))
    if changes:
        return (
            before + 1,
            f"the schema changed since the baseline's {before} ({'; '.join(changes)})",
        )
    return before, f"the schema is unchanged since the baseline's {before}"


def verify_history(
    baseline: Side, candidate: Side, policy: Policy, source: str, directory: str = "DIR"
) -> VerifiedHistory:
    """Judge candidate against baseline; see the module docstring for every rule. Messages
    name the command that fixes them, for the CRDs in directory."""
    subject = HistorySubject(
        baseline=baseline,
        candidate=candidate,
        before_digests=digests_of(baseline.crds),
        after_digests=digests_of(candidate.crds),
        version_key=policy.annotation(SCHEMA_VERSION),
        digest_key=policy.annotation(SCHEMA_DIGEST),
        counters=tuple(_counters_in_play(policy, baseline, candidate)),
        restarts=policy.restarts,
        stamp=f"upgrade-guard stamp {shlex.quote(directory)}",
    )
    before, after = subject.before, subject.after
    notes: list[str] = []
    if len(subject.baseline_versions) > 1:
        notes.append(
            f"baseline CRDs carry different schema versions {subject.baseline_versions};"
            f" taking {before}"
        )
    versioned = tuple(b for b in policy.declared_breaks if b.schema_version is not None)
    unversioned = [str(b) for b in policy.declared_breaks if b.schema_version is None]
    if unversioned:
        notes.append(
            "declared breaks without schema-version are not used by verify-history: "
            + "; ".join(unversioned)
        )
    compared = engine.changes_between(
        normalized(baseline.crds),
        normalized(candidate.crds),
        replace(policy, storage_version_only=True),
    )
    engine_changes = compared.raw
    restart = subject.restart[0] if subject.rolled_back() else None
    if restart is not None:
        excuse = f"restart of schema version {before}: {restart.reason}"
        engine_changes = tuple(
            replace(item, change=replace(item.change, excused=excuse)) for item in engine_changes
        )
    checked = run(_HISTORY_CHECKS, subject)
    outcome = judge(
        replace(compared, raw=checked + engine_changes),
        replace(policy, declared_breaks=versioned),
        Context(release=Release(before, after)),
    )
    counters = tuple(
        CounterState(
            counter.name,
            counter.rule,
            stamped(subject.carriers(baseline), counter.annotation).value,
            stamped(subject.carriers(candidate), counter.annotation).value,
            subject.files_changed(counter),
        )
        for counter in subject.counters
    )
    result = VerifiedHistory(
        baseline=baseline.label,
        candidate=candidate.label,
        source=source,
        baseline_version=before,
        candidate_version=after,
        schema_changed=bool(subject.changes),
        changes=subject.changes,
        first_adoption=before is None,
        restart=restart,
        counters=counters,
        outcome=outcome,
        notes=tuple(notes),
    )
    return described(result)


def described(history: VerifiedHistory) -> VerifiedHistory:
    """history with its baseline, versions, counters and notes in the outcome, where every
    report format shows them."""
    facts, details = _facts(history), _details(history)
    return replace(history, outcome=replace(history.outcome, facts=facts, details=details))


def _version(value: int | None) -> str:
    return "none" if value is None else str(value)


def _facts(history: VerifiedHistory) -> tuple[tuple[str, str], ...]:
    schema = f"version {_version(history.baseline_version)} → {_version(history.candidate_version)}"
    if history.first_adoption:
        schema += " (first adoption)"
    if history.schema_changed:
        schema += "; changed: " + "; ".join(history.changes)
    else:
        schema += "; unchanged"
    facts = [
        ("baseline", f"{history.baseline} — {history.source}"),
        ("candidate", history.candidate),
        ("schema", schema),
    ]
    if history.restart is not None:
        facts.append(("restart", history.restart.reason))
    for counter in history.counters:
        files = ""
        if counter.files_changed is not None:
            files = "; files changed" if counter.files_changed else "; files unchanged"
        facts.append(
            (
                "counter",
                f"{counter.name} ({counter.rule}) {_version(counter.before)} →"
                f" {_version(counter.after)}{files}",
            )
        )
    facts.extend(("note", note) for note in history.notes)
    return tuple(facts)


def _details(history: VerifiedHistory) -> dict[str, Any]:
    return {
        "baseline": history.baseline,
        "candidate": history.candidate,
        "source": history.source,
        "schema": {
            "baseline_version": history.baseline_version,
            "candidate_version": history.candidate_version,
            "changed": history.schema_changed,
            "changes": list(history.changes),
            "first_adoption": history.first_adoption,
            "restart": history.restart.reason if history.restart else None,
        },
        "counters": [
            {
                "name": c.name,
                "rule": c.rule,
                "baseline": c.before,
                "candidate": c.after,
                "files_changed": c.files_changed,
            }
            for c in history.counters
        ],
        "notes": list(history.notes),
    }
