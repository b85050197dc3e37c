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

Schema and counter values are canonical positive decimals: 1, 2, 10 (not 0, 01, +1, 1.0).
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from upgrade_guard import rules
from upgrade_guard.crd import CONTROLLER_STATE_VERSION as CONTROLLER_STATE_VERSION
from upgrade_guard.crd import DEFAULT_ANNOTATION_PREFIX as DEFAULT_ANNOTATION_PREFIX
from upgrade_guard.crd import SCHEMA_DIGEST as SCHEMA_DIGEST
from upgrade_guard.crd import SCHEMA_VERSION as SCHEMA_VERSION
from upgrade_guard.crd import canonical_number as canonical_number
from upgrade_guard.findings import Finding, Severity
from upgrade_guard.lifecycle import settings as lifecycle_settings

_SEVERITY_WORDS: dict[str, Severity | None] = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "info": Severity.INFO,
    "ignore": None,
}
_TOP_KEYS = frozenset(
    {
        "profile",
        "versions",
        "rules",
        "declared-breaks",
        "annotation-prefix",
        "restarts",
        "counters",
        "stored-state",
        "lifecycle",
    }
)
_BREAK_KEYS = frozenset(
    {"crd", "rule", "path", "version", "schema-version", "reason", "old", "new"}
)
_RESTART_KEYS = frozenset({"schema-version", "digests", "reason"})
_COUNTER_KEYS = frozenset({"name", "rule", "files", "annotation", "paired-with-image"})
_STORED_STATE_KEYS = frozenset({"resource", "version", "path"})
COUNTER_RULES = ("monotonic", "equal-when-unchanged")
_DNS_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/\Z")
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")


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
        if finding.code != self.code or not glob_pattern(self.crd).match(finding.crd):
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
class Restart:
    """A rollback of crd-schema-version admitted for exactly one baseline tree."""

    schema_version: int
    digests: Mapping[str, str]
    reason: str


@dataclass(frozen=True)
class Counter:
    """A contract counter stamped on every CRD as an annotation, and the rule it follows."""

    name: str
    rule: str  # one of COUNTER_RULES
    annotation: str
    files: tuple[str, ...] = ()
    paired_with_image: bool = False


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


def did_you_mean(wrong: Any, known: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the nearest known spelling, or "" when nothing is near."""
    near = difflib.get_close_matches(str(wrong), sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _rule_code(value: Any, where: str) -> str:
    rule = rules.lookup(str(value)) if isinstance(value, str) else None
    if rule is None:
        names = [r.name for r in rules.ALL_RULES] + [r.code for r in rules.ALL_RULES]
        hint = did_you_mean(value, names) or " (see `upgrade-guard rules`)"
        raise PolicyError(f"{where}: unknown rule {value!r}{hint}")
    return rule.code


def _text(entry: Mapping[str, Any], key: str, where: str, required: bool) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise PolicyError(f"{where}: {key} is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise PolicyError(f"{where}: {key} must be a non-empty string")
    return value


def _schema_version(entry: Mapping[str, Any], where: str) -> int | None:
    if "schema-version" not in entry:
        return None
    number = canonical_number(entry["schema-version"])
    if number is None:
        raise PolicyError(
            f"{where}: schema-version must be a canonical positive decimal,"
            f" not {entry['schema-version']!r}"
        )
    return number


def _check_keys(entry: Any, where: str, allowed: frozenset[str], shape: str) -> None:
    """A policy entry must be a mapping of known keys; the error names where it is."""
    if not isinstance(entry, Mapping):
        raise PolicyError(f"{where}: {shape}")
    unknown = sorted(set(entry) - allowed, key=str)
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)}")


def _change(entry: Mapping[str, Any], where: str) -> tuple[Any, Any] | None:
    if "old" not in entry and "new" not in entry:
        return None
    if "old" not in entry or "new" not in entry:
        raise PolicyError(f"{where}: a group names both old and new (null for absent)")
    return entry["old"], entry["new"]


def _reason(entry: Mapping[str, Any], where: str) -> str:
    reason = entry.get("reason")
    if isinstance(reason, str) and not reason.strip() and "reason" in entry:
        raise PolicyError(
            f"{where}: reason is empty: say why this break is meant before it excuses anything"
        )
    return _text(entry, "reason", where, required=True) or ""


def _declared_break(entry: Any, where: str) -> DeclaredBreak:
    _check_keys(entry, where, _BREAK_KEYS, "must be a mapping with crd, rule, reason")
    return DeclaredBreak(
        change=_change(entry, where),
        crd=_text(entry, "crd", where, required=True) or "",
        code=_rule_code(entry.get("rule"), f"{where}.rule"),
        path=_text(entry, "path", where, required=False),
        version=_text(entry, "version", where, required=False),
        reason=_reason(entry, where),
        schema_version=_schema_version(entry, where),
    )


def _restart(entry: Any, where: str) -> Restart:
    shape = "must be a mapping with schema-version, digests, reason"
    _check_keys(entry, where, _RESTART_KEYS, shape)
    version = _schema_version(entry, where)
    if version is None:
        raise PolicyError(f"{where}: schema-version is required")
    digests = entry.get("digests")
    if not isinstance(digests, Mapping) or not digests:
        raise PolicyError(f"{where}: digests must map every baseline CRD to its digest")
    for name, digest in digests.items():
        if not isinstance(digest, str) or not _DIGEST.match(digest):
            raise PolicyError(f"{where}: digests.{name}: expected sha256: and 64 hex digits")
    return Restart(
        schema_version=version,
        digests={str(name): str(digest) for name, digest in digests.items()},
        reason=_text(entry, "reason", where, required=True) or "",
    )


def _counter(entry: Any, where: str, prefix: str) -> Counter:
    _check_keys(entry, where, _COUNTER_KEYS, "must be a mapping with name and rule")
    name = _text(entry, "name", where, required=True) or ""
    if not _NAME.match(name) or name in (SCHEMA_VERSION, SCHEMA_DIGEST):
        raise PolicyError(f"{where}: {name!r} cannot name a counter")
    rule = entry.get("rule")
    if rule not in COUNTER_RULES:
        raise PolicyError(f"{where}: rule must be one of {', '.join(COUNTER_RULES)}")
    files = entry.get("files", [])
    if rule == "equal-when-unchanged":
        if not isinstance(files, list) or not files:
            raise PolicyError(f"{where}: equal-when-unchanged needs files: a list of globs")
    elif files:
        raise PolicyError(f"{where}: files only go with equal-when-unchanged")
    if not all(isinstance(pattern, str) and pattern.strip() for pattern in files):
        raise PolicyError(f"{where}: files must be non-empty strings")
    annotation = _text(entry, "annotation", where, required=False) or prefix + name
    paired = entry.get("paired-with-image", False)
    if not isinstance(paired, bool):
        raise PolicyError(f"{where}: paired-with-image must be true or false")
    return Counter(name, rule, annotation, tuple(files), paired)


_RESOURCE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_PATH_PART = re.compile(r"[A-Za-z_$][-A-Za-z0-9_$]*\Z")


def _stored_state(entry: Any, where: str) -> StoredState:
    _check_keys(entry, where, _STORED_STATE_KEYS, "must be a mapping with resource and path")
    resource = _text(entry, "resource", where, required=True) or ""
    if not _RESOURCE.match(resource):
        raise PolicyError(f"{where}: resource must be plural.group, such as widgets.example.com")
    path = (_text(entry, "path", where, required=True) or "").split(".")
    if not all(_PATH_PART.match(part) for part in path):
        raise PolicyError(f"{where}: path must be dotted field names, such as status.stateVersion")
    version = _text(entry, "version", where, required=not resource.count("."))
    return StoredState(resource, tuple(path), version)


def _contracts(raw: Mapping[str, Any], source: str) -> dict[str, Any]:
    prefix = raw.get("annotation-prefix", DEFAULT_ANNOTATION_PREFIX)
    if not isinstance(prefix, str) or not _DNS_PREFIX.match(prefix) or len(prefix) > 254:
        raise PolicyError(
            f"{source}: annotation-prefix must be a DNS subdomain followed by /,"
            f" such as {DEFAULT_ANNOTATION_PREFIX}"
        )
    restarts = raw.get("restarts") or []
    counters = raw.get("counters") or []
    if not isinstance(restarts, list):
        raise PolicyError(f"{source}: restarts must be a list")
    if not isinstance(counters, list):
        raise PolicyError(f"{source}: counters must be a list")
    parsed = tuple(
        _counter(entry, f"{source}: counters[{index}]", prefix)
        for index, entry in enumerate(counters)
    )
    names = [counter.name for counter in parsed]
    if len(set(names)) != len(names):
        raise PolicyError(f"{source}: counters: a name is declared twice")
    stored_state = raw.get("stored-state") or []
    if not isinstance(stored_state, list):
        raise PolicyError(f"{source}: stored-state must be a list")
    return {
        "stored_state": tuple(
            _stored_state(entry, f"{source}: stored-state[{index}]")
            for index, entry in enumerate(stored_state)
        ),
        "annotation_prefix": prefix,
        "restarts": tuple(
            _restart(entry, f"{source}: restarts[{index}]") for index, entry in enumerate(restarts)
        ),
        "counters": parsed,
    }


def parse_policy(raw: Any, source: str) -> Policy:
    """Turn a loaded policy document into a Policy, or raise PolicyError naming source."""
    if raw is None:
        return Policy(severities={}, source=source)
    _check_keys(raw, source, _TOP_KEYS, "a policy must be a mapping")
    profile = raw.get("profile", "default")
    if profile not in ("default", "strict"):
        raise PolicyError(f"{source}: profile must be default or strict, not {profile!r}")
    versions = raw.get("versions", "served")
    if versions not in ("served", "storage"):
        raise PolicyError(f"{source}: versions must be served or storage, not {versions!r}")
    overrides = raw.get("rules") or {}
    if not isinstance(overrides, Mapping):
        raise PolicyError(f"{source}: rules must be a mapping of rule to severity")
    severities: dict[str, Severity | None] = {}
    for key, word in overrides.items():
        where = f"{source}: rules.{key}"
        if word not in _SEVERITY_WORDS:
            raise PolicyError(f"{where}: must be one of {', '.join(_SEVERITY_WORDS)}")
        severities[_rule_code(key, where)] = _SEVERITY_WORDS[word]
    breaks = raw.get("declared-breaks") or []
    if not isinstance(breaks, list):
        raise PolicyError(f"{source}: declared-breaks must be a list")
    return Policy(
        source=source,
        severities=severities,
        strict=profile == "strict",
        storage_version_only=versions == "storage",
        declared_breaks=tuple(
            _declared_break(entry, f"{source}: declared-breaks[{index}]")
            for index, entry in enumerate(breaks)
        ),
        **_contracts(raw, source),
        lifecycle=_lifecycle(raw.get("lifecycle"), source),
    )


# ------------------------------------------------ declared breaks written from findings


def _crd_glob(names: set[str]) -> str:
    """One CRD name, or a glob over the longest dotted suffix the names share."""
    if len(names) == 1:
        return next(iter(names))
    labels = [name.split(".") for name in names]
    shared: list[str] = []
    while all(len(parts) > len(shared) + 1 for parts in labels):
        candidates = {parts[-1 - len(shared)] for parts in labels}
        if len(candidates) != 1:
            break
        shared.insert(0, candidates.pop())
    single_label = all(len(parts) == len(shared) + 1 for parts in labels)
    return ("*" if single_label else "**") + "".join(f".{label}" for label in shared)


def declared_break_entries(
    findings: Iterable[Finding], schema_version: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """Policy entries, with ``reason: ""`` to fill in, that would excuse every refusing
    finding: findings of one rule with the same change (old -> new) become one group entry;
    the others one entry per place (CRD, rule, version, path). Each comes with the number
    of findings it covers; groups come first, so they match before any place entry. With
    the schema version the release ships, each entry carries it, so it applies to that
    release only and later releases (a value change, a rollback way out) skip it."""
    changes: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        if finding.refuses and rules.lookup(finding.code) is not None:
            key = (finding.code, _canonical_json(finding.old), _canonical_json(finding.new))
            changes.setdefault(key, []).append(finding)
    entries: list[tuple[int, dict[str, Any]]] = []
    places: dict[tuple[str, str, str | None, str | None], list[Finding]] = {}
    for members in changes.values():
        first = members[0]
        if len(members) == 1:
            places.setdefault((first.crd, first.code, first.version, first.path), []).append(first)
            continue
        group = {"crd": _crd_glob({f.crd for f in members}), "rule": first.rule}
        entries.append((len(members), {**group, "old": first.old, "new": first.new}))
    for (crd, _, version, path), members in places.items():
        entry: dict[str, Any] = {"crd": crd, "rule": members[0].rule}
        if version is not None:
            entry["version"] = version
        if path is not None:
            entry["path"] = path
        entries.append((len(members), entry))
    shipped = {} if schema_version is None else {"schema-version": schema_version}
    return [(count, {**entry, **shipped, "reason": ""}) for count, entry in entries]


# --- API lifecycle (verify-lifecycle): the `lifecycle:` section, parsed in lifecycle/settings


def _lifecycle(raw: Any, source: str) -> lifecycle_settings.LifecycleSettings:
    try:
        return lifecycle_settings.parse_lifecycle(raw, source)
    except lifecycle_settings.LifecycleError as error:
        raise PolicyError(str(error)) from None
