"""The policy file: per-rule severities, the strict profile, and declared breaks.

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
    reason: "legacyField was unused since 1.4; see CHANGELOG"
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from upgrade_guard import rules
from upgrade_guard.findings import Finding, Severity

_SEVERITY_WORDS: dict[str, Severity | None] = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "info": Severity.INFO,
    "ignore": None,
}
_TOP_KEYS = frozenset({"profile", "versions", "rules", "declared-breaks"})
_BREAK_KEYS = frozenset({"crd", "rule", "path", "version", "reason"})


class PolicyError(ValueError):
    """A policy document that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class DeclaredBreak:
    crd: str
    code: str
    path: str | None
    version: str | None
    reason: str

    def excuses(self, finding: Finding) -> bool:
        return (
            finding.crd == self.crd
            and finding.code == self.code
            and finding.path == self.path
            and (self.version is None or finding.version == self.version)
        )

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        version = f" version {self.version}" if self.version else ""
        return f"{self.code} on {self.crd}{version}{where}"


@dataclass(frozen=True)
class Policy:
    severities: Mapping[str, Severity | None]
    strict: bool = False
    storage_version_only: bool = False
    declared_breaks: tuple[DeclaredBreak, ...] = ()

    def severity_of(self, code: str, default: Severity) -> Severity | None:
        return self.severities.get(code, default)


DEFAULT_POLICY = Policy(severities={})


def _rule_code(value: Any, where: str) -> str:
    rule = rules.lookup(str(value)) if isinstance(value, str) else None
    if rule is None:
        raise PolicyError(f"{where}: unknown rule {value!r} (see `upgrade-guard rules`)")
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


def _declared_break(entry: Any, where: str) -> DeclaredBreak:
    if not isinstance(entry, Mapping):
        raise PolicyError(f"{where}: must be a mapping with crd, rule, reason")
    unknown = sorted(set(entry) - _BREAK_KEYS)
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r}")
    return DeclaredBreak(
        crd=_text(entry, "crd", where, required=True) or "",
        code=_rule_code(entry.get("rule"), f"{where}.rule"),
        path=_text(entry, "path", where, required=False),
        version=_text(entry, "version", where, required=False),
        reason=_text(entry, "reason", where, required=True) or "",
    )


def parse_policy(raw: Any, source: str) -> Policy:
    """Turn a loaded policy document into a Policy, or raise PolicyError naming source."""
    if raw is None:
        return DEFAULT_POLICY
    if not isinstance(raw, Mapping):
        raise PolicyError(f"{source}: a policy must be a mapping")
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise PolicyError(f"{source}: unknown key {unknown[0]!r}")
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
        severities=severities,
        strict=profile == "strict",
        storage_version_only=versions == "storage",
        declared_breaks=tuple(
            _declared_break(entry, f"{source}: declared-breaks[{index}]")
            for index, entry in enumerate(breaks)
        ),
    )
