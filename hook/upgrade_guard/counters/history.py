"""verify-history's judgement: a candidate CRD set against its baseline, counters included.

Pure: both sides arrive as CRDs already read (and, for ``equal-when-unchanged`` counters, the
digest of their files). The rules, each refusal a Finding with a code below:

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
  - every candidate CRD carries the same canonical value (UG708);
  - ``monotonic``: never below the baseline value (UG709);
  - ``equal-when-unchanged``: when the digest of its files changed, strictly above the
    baseline value (UG710); when not, equal (UG711). A counter the baseline lacks starts
    freely.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from upgrade_guard import engine
from upgrade_guard.counters import digest
from upgrade_guard.crd import Crd, annotations_of, stamped_number
from upgrade_guard.findings import Change, Outcome
from upgrade_guard.judging import Context, Placed, Release, judge
from upgrade_guard.policy import (
    CONTROLLER_STATE_VERSION,
    SCHEMA_DIGEST,
    SCHEMA_VERSION,
    Counter,
    Policy,
    Restart,
)
from upgrade_guard.rules import (
    counter_bumped_without_change,
    counter_changed_without_bump,
    counter_decreased,
    counter_missing,
    first_adoption_not_one,
    schema_bumped_without_change,
    schema_changed_without_bump,
    schema_digest_stale,
    schema_version_missing,
    schema_version_rolled_back,
    schema_versions_disagree,
)
from upgrade_guard.rules.base import ALL_CRDS, HistoryCheck

_SCHEMA_CHECKS = (schema_version_missing.RULE, schema_versions_disagree.RULE)
_COUNTER_CHECKS = (counter_missing.RULE, counter_missing.RULE)


@dataclass(frozen=True)
class Side:
    """One tree's CRDs, and the digest of each equal-when-unchanged counter's files."""

    label: str
    crds: Mapping[str, Crd]
    file_digests: Mapping[str, str] = field(default_factory=dict)


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


def _finding(
    check: HistoryCheck, crd: str, message: str, old: Any = None, new: Any = None
) -> Placed:
    return Placed(check, crd, None, None, Change(None, message, old, new))


def digests_of(crds: Mapping[str, Crd]) -> dict[str, str]:
    return {name: digest.spec_digest(crd.spec) for name, crd in crds.items()}


def normalized(crds: Mapping[str, Crd]) -> dict[str, Crd]:
    """The CRDs with their specs as the digest sees them, for the engine."""
    return {
        name: Crd({**crd.raw, "spec": digest.normalized_spec(crd.spec)}, crd.source)
        for name, crd in crds.items()
    }


def _changes(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    changes = [f"{name} added" for name in sorted(after.keys() - before.keys())]
    changes += [f"{name} removed" for name in sorted(before.keys() - after.keys())]
    changes += [
        f"{name} changed"
        for name in sorted(before.keys() & after.keys())
        if before[name] != after[name]
    ]
    return tuple(changes)


def _agreed(
    crds: Mapping[str, Crd],
    key: str,
    checks: tuple[HistoryCheck, HistoryCheck],
    label: str,
    findings: list[Placed] | None,
    fix: str = "run upgrade-guard stamp",
) -> int | None:
    """The value every CRD carries under key; findings (when given) get what is wrong."""
    values: dict[int, list[str]] = {}
    for name, crd in sorted(crds.items()):
        number = stamped_number(crd, key)
        if number is None:
            if findings is not None:
                carried = annotations_of(crd).get(key)
                what = "no" if carried is None else f"the non-canonical {carried!r} as"
                findings.append(
                    _finding(
                        checks[0],
                        name,
                        f"{label} carries {what} {key} (a canonical positive decimal"
                        f' string such as "1"; {fix})',
                        new=carried,
                    )
                )
            continue
        values.setdefault(number, []).append(name)
    if len(values) > 1 and findings is not None:
        spread = "; ".join(f"{v}: {', '.join(names)}" for v, names in sorted(values.items()))
        findings.append(
            _finding(
                checks[1],
                ALL_CRDS,
                f"{label} CRDs carry different {key} values ({spread}); all must agree",
                new=sorted(values),
            )
        )
    return max(values) if values else None


def _restart_for(
    policy: Policy, version: int, baseline: Mapping[str, str]
) -> tuple[Restart | None, str]:
    candidates = [r for r in policy.restarts if r.schema_version == version]
    if not candidates:
        return None, f"no restart record names schema version {version}"
    problems: list[str] = []
    for record in candidates:
        if dict(record.digests) == dict(baseline):
            return record, ""
        wrong = sorted(n for n in baseline if record.digests.get(n) != baseline[n])
        extra = sorted(record.digests.keys() - baseline.keys())
        detail = []
        if wrong:
            detail.append("differs for " + ", ".join(wrong))
        if extra:
            detail.append("names CRDs the baseline lacks: " + ", ".join(extra))
        problems.append("; ".join(detail))
    return None, (
        f"the restart record for schema version {version} is for another tree"
        f" ({' / '.join(problems)})"
    )


def _counters_in_play(policy: Policy, baseline: Side, candidate: Side) -> list[Counter]:
    counters = list(policy.counters)
    if all(counter.name != CONTROLLER_STATE_VERSION for counter in counters):
        key = policy.annotation(CONTROLLER_STATE_VERSION)
        carried = any(
            key in annotations_of(crd)
            for side in (baseline, candidate)
            for crd in side.crds.values()
        )
        if carried:
            counters.append(Counter(CONTROLLER_STATE_VERSION, "monotonic", key))
    return counters


def _check_counter(
    counter: Counter, baseline: Side, candidate: Side, findings: list[Placed]
) -> CounterState:
    key = counter.annotation
    before = _agreed(baseline.crds, key, _COUNTER_CHECKS, baseline.label, None)
    after = _agreed(candidate.crds, key, _COUNTER_CHECKS, "candidate", findings)
    files_changed: bool | None = None
    if counter.rule == "equal-when-unchanged":
        files_changed = baseline.file_digests.get(counter.name) != candidate.file_digests.get(
            counter.name
        )
    if before is None or after is None:
        return CounterState(counter.name, counter.rule, before, after, files_changed)
    if counter.rule == "monotonic" and after < before:
        findings.append(
            _finding(
                counter_decreased.RULE,
                ALL_CRDS,
                f"{counter.name} went down from {before} to {after}; it is monotonic",
                before,
                after,
            )
        )
    elif counter.rule == "equal-when-unchanged" and files_changed and after <= before:
        findings.append(
            _finding(
                counter_changed_without_bump.RULE,
                ALL_CRDS,
                f"the files of {counter.name} changed but it stayed at {after}"
                f" (must be above {before})",
                before,
                after,
            )
        )
    elif counter.rule == "equal-when-unchanged" and not files_changed and after != before:
        findings.append(
            _finding(
                counter_bumped_without_change.RULE,
                ALL_CRDS,
                f"{counter.name} moved from {before} to {after} but its files did not change",
                before,
                after,
            )
        )
    return CounterState(counter.name, counter.rule, before, after, files_changed)


def release_of(policy: Policy, old: Mapping[str, Crd], new: Mapping[str, Crd]) -> Release:
    """The schema versions a comparison of two CRD sets (diff, the cluster hook) goes
    between: the highest each side is stamped with."""
    key = policy.annotation(SCHEMA_VERSION)
    return Release(
        _agreed(old, key, _SCHEMA_CHECKS, "old", None),
        _agreed(new, key, _SCHEMA_CHECKS, "new", None),
    )


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
    changes = _changes(digests_of(baseline), digests_of(candidate))
    if changes:
        return (
            before + 1,
            f"the schema changed since the baseline's {before} ({'; '.join(changes)})",
        )
    return before, f"the schema is unchanged since the baseline's {before}"


def _unstamped_set(crds: Mapping[str, Crd], keys: tuple[str, str], bump: str) -> Placed | None:
    """One finding for CRDs that all lack both annotations (a code generator rewrote them),
    instead of two per CRD."""
    if not crds or any(key in annotations_of(crd) for crd in crds.values() for key in keys):
        return None
    count = len(crds)
    return _finding(
        schema_version_missing.RULE,
        ALL_CRDS,
        f"none of the {count} CRD{'s' if count != 1 else ''} carries {keys[0]} or {keys[1]}"
        f" (regenerated and not stamped?): run `{bump}`",
    )


def verify_history(
    baseline: Side, candidate: Side, policy: Policy, source: str, directory: str = "DIR"
) -> VerifiedHistory:
    """Judge candidate against baseline; see the module docstring for every rule. Messages
    name the command that fixes them, for the CRDs in directory."""
    findings: list[Placed] = []
    notes: list[str] = []
    version_key = policy.annotation(SCHEMA_VERSION)
    digest_key = policy.annotation(SCHEMA_DIGEST)
    before_digests = digests_of(baseline.crds)
    after_digests = digests_of(candidate.crds)
    stamp = f"upgrade-guard stamp {shlex.quote(directory)}"

    after = _agreed(
        candidate.crds,
        version_key,
        _SCHEMA_CHECKS,
        "candidate",
        findings,
        f"run `{stamp} --bump`",
    )
    for name, crd in sorted(candidate.crds.items()):
        stamped = annotations_of(crd).get(digest_key)
        if stamped != after_digests[name]:
            findings.append(
                _finding(
                    schema_digest_stale.RULE,
                    name,
                    f"{digest_key} is {stamped or 'missing'}, but the spec's digest is"
                    f" {after_digests[name]} (run `{stamp} --bump`)",
                    stamped,
                    after_digests[name],
                )
            )
    regenerated = _unstamped_set(candidate.crds, (version_key, digest_key), f"{stamp} --bump")
    if regenerated is not None:
        findings = [regenerated]
    baseline_values = sorted(
        {n for n in (stamped_number(c, version_key) for c in baseline.crds.values()) if n}
    )
    before = baseline_values[-1] if baseline_values else None
    if len(baseline_values) > 1:
        notes.append(
            f"baseline CRDs carry different schema versions {baseline_values}; taking {before}"
        )
    first_adoption = before is None
    changes = _changes(before_digests, after_digests)
    changed = bool(changes)
    restart: Restart | None = None

    if after is not None:
        if first_adoption:
            if after != 1:
                what = "has no CRDs" if not baseline.crds else "carries no schema versions"
                findings.append(
                    _finding(
                        first_adoption_not_one.RULE,
                        ALL_CRDS,
                        f"the baseline {what}, so this is a first adoption: the schema"
                        f" version must be 1, not {after}: run `{stamp} --schema-version 1`",
                        None,
                        after,
                    )
                )
        elif before is not None and after == before and changed:
            findings.append(
                _finding(
                    schema_changed_without_bump.RULE,
                    ALL_CRDS,
                    f"the schema changed ({'; '.join(changes)}) but the schema version"
                    f" stayed at {after}; raise it to {before + 1}:"
                    f" run `{stamp} --schema-version {before + 1}`",
                    before,
                    after,
                )
            )
        elif before is not None and after > before and not changed:
            findings.append(
                _finding(
                    schema_bumped_without_change.RULE,
                    ALL_CRDS,
                    f"the schema version moved from {before} to {after} but no normalized"
                    f" spec changed; keep it at {before}: run `{stamp} --schema-version {before}`",
                    before,
                    after,
                )
            )
        elif before is not None and after < before:
            restart, problem = _restart_for(policy, before, before_digests)
            if restart is None:
                findings.append(
                    _finding(
                        schema_version_rolled_back.RULE,
                        ALL_CRDS,
                        f"the schema version went down from {before} to {after}: a rollback,"
                        f" and {problem}",
                        before,
                        after,
                    )
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
    if restart is not None:
        excuse = f"restart of schema version {before}: {restart.reason}"
        engine_changes = tuple(
            replace(item, change=replace(item.change, excused=excuse)) for item in engine_changes
        )

    counters = tuple(
        _check_counter(counter, baseline, candidate, findings)
        for counter in _counters_in_play(policy, baseline, candidate)
    )
    outcome = judge(
        replace(compared, raw=tuple(findings) + engine_changes),
        replace(policy, declared_breaks=versioned),
        Context(release=Release(before, after)),
    )
    result = VerifiedHistory(
        baseline=baseline.label,
        candidate=candidate.label,
        source=source,
        baseline_version=before,
        candidate_version=after,
        schema_changed=changed,
        changes=changes,
        first_adoption=first_adoption,
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
