"""The policy file: per-rule severities, the strict profile, declared breaks, and counters.

profile: default            # or strict: warnings refuse too, and ratcheting is ignored
versions: served            # or storage: which versions present on both sides to compare
rules:
  UG107: error              # a code or a rule name -> error | warning | info | ignore
  default-changed: warning
declared-breaks:
  - crd: widgets.example.com
    rule: UG201             # code or name
    path: spec.legacyField  # omitted for CRD-level findings
    version: v1             # optional: this CRD version only
    schema-version: 4       # optional: the crd-schema-version this break ships with;
                            # verify-history uses only breaks for the versions it crosses
    reason: "legacyField was unused since 1.4; see CHANGELOG"

# Contract counters (`upgrade-guard stamp`, `upgrade-guard verify-history`):
annotation-prefix: upgrade-guard.io/   # default; the CRD annotations are <prefix>crd-schema-
                                       # version, <prefix>crd-schema-digest, <prefix><counter>
restarts:                   # rollbacks of crd-schema-version verify-history admits
  - schema-version: 5       # the baseline version abandoned
    digests:                # the digest of every baseline CRD, exactly (stamp writes them)
      widgets.example.com: "sha256:<64 hex>"
    reason: "5 was never released; main goes back to 4"
counters:                   # other counters, stamped on every CRD as <prefix><name>
  - name: controller-state-version
    rule: monotonic         # never decreases between baseline and candidate
  - name: admission-contract
    rule: equal-when-unchanged   # rises when the files change, stays equal otherwise
    files: ["config/webhook/**", "api/admission/*.go"]  # globs from the repository root
    annotation: example.com/admission-contract          # optional: the full annotation key
    paired-with-image: true   # optional: the hook also checks the controller image compiles it
                              # (controller-state-version always is)

# Stored state the hook reads (pre-rollback: is anything newer than this release reads?):
stored-state:
  - resource: widgets.example.com   # plural.group of the objects (plural alone: core group)
    version: v1                     # optional for a CRD of the chart (its live storage version)
    path: status.stateVersion       # dotted path to a controller-state version in each object

# What each CRD's controller handles on its objects (the hook and verify-history hold them):
controllers:
  - crd: widgets.example.com
    finalizers: [example.com/cleanup-v2]      # the finalizers its controller removes
    conditions:                               # its condition vocabulary: type -> reasons
      Ready: [Succeeded, Failed]
      Progressing:                            # no reasons declared
    retired-finalizers:                       # no longer handled: the hook refuses objects
      - finalizer: example.com/cleanup        # that carry one
        migration: "2.0 replaces it with example.com/cleanup-v2 on every Widget it reconciles"
    condition-breaks:                         # types, or reasons of a type, dropped on purpose
      - type: Degraded
        reason: "folded into Ready=False since 2.0"

Schema and counter values are canonical positive decimals: 1, 2, 10 (not 0, 01, +1, 1.0).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from upgrade_guard import json_schema, rules
from upgrade_guard.crd import CONTROLLER_STATE_VERSION as CONTROLLER_STATE_VERSION
from upgrade_guard.crd import DEFAULT_ANNOTATION_PREFIX as DEFAULT_ANNOTATION_PREFIX
from upgrade_guard.crd import SCHEMA_DIGEST as SCHEMA_DIGEST
from upgrade_guard.crd import SCHEMA_VERSION as SCHEMA_VERSION
from upgrade_guard.crd import canonical_number as canonical_number
from upgrade_guard.findings import Finding, Severity
from upgrade_guard.lifecycle import settings as lifecycle_settings
from upgrade_guard.policy_schema import policy_schema
from upgrade_guard.subjects import ConditionBreak, Controller, RetiredFinalizer
from upgrade_guard.subjects import Counter as Counter
from upgrade_guard.subjects import Restart as Restart

_SEVERITY_WORDS: dict[str, Severity | None] = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "info": Severity.INFO,
    "ignore": None,
}


POLICY_SCHEMA = policy_schema()


class PolicyError(ValueError):
    """A policy document that cannot be used; the message names the file and the entry."""


@functools.cache
def glob_pattern(pattern: str) -> re.Pattern[str]:
    """A CRD name or dotted-path glob: ``**`` is any text, ``*`` any text without a ``.``;
    every other character, ``[]`` included, stands for itself."""
    parts = (re.escape(piece).replace("\\*", "[^.]*") for piece in pattern.split("**"))
    return re.compile(".*".join(parts) + r"\Z")


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class DeclaredBreak:
    """Findings the authors mean. ``crd`` and ``path`` are globs (``glob_pattern``); without
    ``path`` a break is for CRD-level findings, unless it is a group: a break with ``old``
    and ``new`` (``change``) excuses every finding of its rule with exactly that change, at
    any path (or at the paths ``path`` matches)."""

    crd: str
    code: str
    path: str | None
    version: str | None
    reason: str
    schema_version: int | None = None
    change: tuple[Any, Any] | None = None

    def excuses(self, finding: Finding) -> bool:
        if finding.code != self.code or finding.crd is None:
            return False
        if not glob_pattern(self.crd).match(finding.crd):
            return False
        if self.version is not None and finding.version != self.version:
            return False
        if self.change is not None and (
            _canonical_json(finding.old) != _canonical_json(self.change[0])
            or _canonical_json(finding.new) != _canonical_json(self.change[1])
        ):
            return False
        if self.path is None:
            return self.change is not None or finding.path is None
        return finding.path is not None and bool(glob_pattern(self.path).match(finding.path))

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        version = f" version {self.version}" if self.version else ""
        shipped = f" (schema version {self.schema_version})" if self.schema_version else ""
        group = ""
        if self.change is not None:
            old, new = (_canonical_json(value) for value in self.change)
            group = f" changing {old} -> {new}"
        return f"{self.code} on {self.crd}{version}{where}{group}{shipped}"


@dataclass(frozen=True)
class StoredState:
    """Where the controller writes its state version into objects: every object of resource
    (plural.group, read at version) holds one at the dotted path."""

    resource: str
    path: tuple[str, ...]
    version: str | None = None

    @property
    def plural(self) -> str:
        return self.resource.split(".", 1)[0]

    @property
    def group(self) -> str:
        return self.resource.partition(".")[2]


@dataclass(frozen=True)
class Policy:
    severities: Mapping[str, Severity | None]
    strict: bool = False
    storage_version_only: bool = False
    declared_breaks: tuple[DeclaredBreak, ...] = ()
    annotation_prefix: str = DEFAULT_ANNOTATION_PREFIX
    restarts: tuple[Restart, ...] = ()
    counters: tuple[Counter, ...] = field(default_factory=tuple)
    stored_state: tuple[StoredState, ...] = ()
    controllers: Mapping[str, Controller] = field(default_factory=dict)
    source: str = "none (built-in defaults)"
    lifecycle: lifecycle_settings.LifecycleSettings = lifecycle_settings.DEFAULT_LIFECYCLE

    def annotation(self, name: str) -> str:
        """The annotation key of a counter (crd-schema-version, crd-schema-digest, others)."""
        for counter in self.counters:
            if counter.name == name:
                return counter.annotation
        return self.annotation_prefix + name

    def severity_of(self, code: str, default: Severity) -> Severity | None:
        return self.severities.get(code, default)

    def judged(self, code: str, default: Severity) -> tuple[Severity | None, tuple[str, ...]]:
        """A finding's severity: the override or the default, a warning raised to an error
        under the strict profile, with the notes saying so; None when the rule is ignored."""
        severity = self.severity_of(code, default)
        if self.strict and severity is Severity.WARNING:
            return Severity.ERROR, ("strict profile: warnings refuse",)
        return severity, ()


DEFAULT_POLICY = Policy(severities={})


def _rule_code(value: str, where: str) -> str:
    rule = rules.lookup(value)
    if rule is None:
        names = [r.name for r in rules.ALL_RULES] + [r.code for r in rules.ALL_RULES]
        hint = json_schema.did_you_mean(value, names) or " (see `upgrade-guard rules`)"
        raise PolicyError(f"{where}: unknown rule {value!r}{hint}")
    return rule.code


def _change(entry: Mapping[str, Any], where: str) -> tuple[Any, Any] | None:
    if "old" not in entry and "new" not in entry:
        return None
    if "old" not in entry or "new" not in entry:
        raise PolicyError(f"{where}: a group names both old and new (null for absent)")
    return entry["old"], entry["new"]


def _declared_break(entry: Mapping[str, Any], where: str) -> DeclaredBreak:
    if not entry["reason"].strip():
        raise PolicyError(
            f"{where}: reason is empty: say why this break is meant before it excuses anything"
        )
    return DeclaredBreak(
        change=_change(entry, where),
        crd=entry["crd"],
        code=_rule_code(entry["rule"], f"{where}.rule"),
        path=entry.get("path"),
        version=entry.get("version"),
        reason=entry["reason"],
        schema_version=canonical_number(entry.get("schema-version")),
    )


def _restart(entry: Mapping[str, Any]) -> Restart:
    return Restart(
        schema_version=canonical_number(entry["schema-version"]) or 0,
        digests={str(name): digest for name, digest in entry["digests"].items()},
        reason=entry["reason"],
    )


def _counter(entry: Mapping[str, Any], where: str, prefix: str) -> Counter:
    name, rule, files = entry["name"], entry["rule"], entry.get("files", [])
    if name in (SCHEMA_VERSION, SCHEMA_DIGEST):
        raise PolicyError(f"{where}: {name!r} cannot name a counter")
    if rule == "equal-when-unchanged" and not files:
        raise PolicyError(f"{where}: equal-when-unchanged needs files: a list of globs")
    if rule != "equal-when-unchanged" and files:
        raise PolicyError(f"{where}: files only go with equal-when-unchanged")
    annotation = entry.get("annotation") or prefix + name
    return Counter(name, rule, annotation, tuple(files), entry.get("paired-with-image", False))


def _stored_state(entry: Mapping[str, Any], where: str) -> StoredState:
    resource, version = entry["resource"], entry.get("version")
    if version is None and "." not in resource:
        raise PolicyError(f"{where}: version is required for a core resource ({resource})")
    return StoredState(resource, tuple(entry["path"].split(".")), version)


def _controller(entry: Mapping[str, Any], where: str) -> Controller:
    """One CRD's controller declaration; a name both handled and retired is refused."""
    conditions = entry.get("conditions")
    controller = Controller(
        crd=entry["crd"],
        finalizers=tuple(entry.get("finalizers") or ()),
        conditions=None
        if conditions is None
        else {str(t): None if r is None else tuple(r) for t, r in conditions.items()},
        retired_finalizers=tuple(
            RetiredFinalizer(r["finalizer"], r["migration"])
            for r in entry.get("retired-finalizers") or ()
        ),
        condition_breaks=tuple(
            ConditionBreak(b["type"], tuple(b.get("condition-reasons") or ()), b["reason"])
            for b in entry.get("condition-breaks") or ()
        ),
    )
    both = sorted({r.finalizer for r in controller.retired_finalizers} & set(controller.finalizers))
    if both:
        raise PolicyError(f"{where}: {', '.join(both)} both handled and retired: keep one")
    declared = controller.conditions or {}
    for found in controller.condition_breaks:
        kept = declared.get(found.type, ()) or ()
        if found.type in declared and (not found.reasons or set(found.reasons) & set(kept)):
            raise PolicyError(
                f"{where}: condition type {found.type} is declared and broken: keep one"
            )
    return controller


def _controllers(raw: Mapping[str, Any], source: str) -> dict[str, Controller]:
    controllers: dict[str, Controller] = {}
    for index, entry in enumerate(raw.get("controllers") or []):
        where = f"{source}: controllers[{index}]"
        if entry["crd"] in controllers:
            raise PolicyError(f"{where}: {entry['crd']} is declared twice")
        controllers[entry["crd"]] = _controller(entry, where)
    return controllers


def _contracts(raw: Mapping[str, Any], source: str) -> dict[str, Any]:
    prefix = raw.get("annotation-prefix", DEFAULT_ANNOTATION_PREFIX)
    counters = tuple(
        _counter(entry, f"{source}: counters[{index}]", prefix)
        for index, entry in enumerate(raw.get("counters") or [])
    )
    names = [counter.name for counter in counters]
    if len(set(names)) != len(names):
        raise PolicyError(f"{source}: counters: a name is declared twice")
    return {
        "stored_state": tuple(
            _stored_state(entry, f"{source}: stored-state[{index}]")
            for index, entry in enumerate(raw.get("stored-state") or [])
        ),
        "annotation_prefix": prefix,
        "restarts": tuple(_restart(entry) for entry in raw.get("restarts") or []),
        "counters": counters,
        "controllers": _controllers(raw, source),
    }


def controllers_of(raw: Any, source: str) -> Mapping[str, Controller]:
    """The ``controllers`` section of a policy document another release wrote (a baseline
    commit's, the replaced release's): its other keys are left to the tool version that
    read them then."""
    if not isinstance(raw, Mapping):
        return {}
    return parse_policy({"controllers": raw.get("controllers")}, source).controllers


def parse_policy(raw: Any, source: str) -> Policy:
    """Turn a loaded policy document into a Policy, or raise PolicyError naming source: first
    checked against the published schema (POLICY_SCHEMA), then for what a schema cannot say."""
    if raw is None:
        return Policy(severities={}, source=source)
    found = json_schema.problem(raw, POLICY_SCHEMA)
    if found:
        raise PolicyError(f"{source}: {found}")
    severities = {
        _rule_code(key, f"{source}: rules.{key}"): _SEVERITY_WORDS[word]
        for key, word in (raw.get("rules") or {}).items()
    }
    return Policy(
        source=source,
        severities=severities,
        strict=raw.get("profile") == "strict",
        storage_version_only=raw.get("versions") == "storage",
        declared_breaks=tuple(
            _declared_break(entry, f"{source}: declared-breaks[{index}]")
            for index, entry in enumerate(raw.get("declared-breaks") or [])
        ),
        **_contracts(raw, source),
        lifecycle=lifecycle_settings.parse_lifecycle(raw.get("lifecycle")),
    )


# ------------------------------------------------ declared breaks written from findings


def declared_break_entries(
    findings: Iterable[Finding], schema_version: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """Policy entries, with ``reason: ""`` to fill in, that excuse every refusing finding and
    nothing else this comparison or a later one finds: one entry per place (CRD, rule,
    version, path), each named exactly (no CRD glob, no path glob, no group by change:
    those would excuse the same change at every path of every CRD of a group, now and in
    later releases), with the number of findings it covers. With the schema version the
    release ships, each entry carries it, so it applies to that release only and later
    releases (a value change, a rollback way out) skip it."""
    places: dict[tuple[str, str, str | None, str | None], list[Finding]] = {}
    for finding in findings:
        # a break names a CRD: one about the CRDs as a whole is never excused by one
        if finding.refuses and finding.crd is not None and rules.lookup(finding.code) is not None:
            where = (finding.crd, finding.code, finding.version, finding.path)
            places.setdefault(where, []).append(finding)
    entries: list[tuple[int, dict[str, Any]]] = []
    for (crd, _, version, path), members in places.items():
        entry: dict[str, Any] = {"crd": crd, "rule": members[0].rule}
        if version is not None:
            entry["version"] = version
        if path is not None:
            entry["path"] = path
        if schema_version is not None:
            entry["schema-version"] = schema_version
        entries.append((len(members), {**entry, "reason": ""}))
    return entries
