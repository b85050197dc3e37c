"""The policy file's published JSON Schema: valid JSON Schema, printed by `upgrade-guard schema
policy`, and in step with what the tool reads. Every policy the docs and the example charts
show is accepted by it (checked by jsonschema, the reference validator) and by the tool; each
malformed policy below is refused by both, the tool naming the entry in its own words."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from upgrade_guard.policy import POLICY_SCHEMA, PolicyError, parse_policy

REPO = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(POLICY_SCHEMA)


def shown_policies() -> list[tuple[str, Any]]:
    found = [
        (str(path.relative_to(REPO)), yaml.safe_load(path.read_text()))
        for path in sorted(REPO.glob("chart-snippets/**/policy.yaml"))
    ]
    for page in ("policy.md", "counters.md", "lifecycle.md"):
        blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / page).read_text(), re.DOTALL)
        found += [(f"docs/{page} #{index}", yaml.safe_load(b)) for index, b in enumerate(blocks)]
    return found


def test_the_schema_is_valid_and_published() -> None:
    jsonschema.Draft202012Validator.check_schema(POLICY_SCHEMA)
    printed = subprocess.run(
        [sys.executable, "-m", "upgrade_guard", "schema", "policy"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(printed.stdout) == POLICY_SCHEMA


@pytest.mark.parametrize(("where", "policy"), shown_policies(), ids=lambda p: str(p)[:40])
def test_every_policy_shown_is_valid(where: str, policy: Any) -> None:
    assert not list(VALIDATOR.iter_errors(policy)), where
    parse_policy(policy, where)


BREAK = {"crd": "a.example.com", "rule": "UG201", "path": "spec.x", "reason": "r"}


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ([], "policy.yaml: must be a mapping"),
        ({"rulez": {}}, "unknown key 'rulez' (did you mean 'rules'?)"),
        ({"rules": {"UG207": "fatal"}}, "rules.UG207: must be one of error, warning"),
        ({"profile": "paranoid"}, "profile: must be one of default, strict, not 'paranoid'"),
        ({"declared-breaks": {"crd": "x"}}, "declared-breaks: must be a list"),
        ({"declared-breaks": [{"crd": "x", "rule": "UG201"}]}, "[0]: reason is required"),
        ({"declared-breaks": [{**BREAK, "pth": "x"}]}, "'pth' (did you mean 'path'?)"),
        ({"declared-breaks": [{**BREAK, "schema-version": "04"}]}, "canonical positive decimal"),
        ({"declared-breaks": [{**BREAK, "schema-version": True}]}, "canonical positive decimal"),
        ({"restarts": [{"schema-version": 1, "digests": {}, "reason": "r"}]}, "digests: must not"),
        ({"restarts": [{"schema-version": 1, "digests": {"a": "x"}, "reason": "r"}]}, "64 hex"),
        ({"counters": [{"name": "a b", "rule": "monotonic"}]}, "expected a counter name"),
        ({"counters": [{"name": "s", "rule": "sometimes"}]}, "must be one of monotonic"),
        ({"annotation-prefix": "upgrade-guard.io"}, "a DNS subdomain followed by /"),
        ({"stored-state": [{"resource": "Widgets", "path": "status.v"}]}, "plural.group"),
        ({"stored-state": [{"resource": "a.b", "path": "status..v"}]}, "dotted field names"),
        ({"lifecycle": {"tiers": {"beta": {"deprecation": {"days": -1}}}}}, "days: must be 0"),
        ({"lifecycle": {"tier-overrides": [{"crd": "a", "version": "v1", "tier": "GA"}]}}, "tier"),
        ({"controllers": [{"crd": "a.b", "finalizer": ["x/y"]}]}, "(did you mean 'finalizers'?)"),
        ({"controllers": [{"crd": "a.b", "finalizers": "x/y"}]}, "finalizers: must be a list"),
        ({"controllers": [{"crd": "a.b", "conditions": {"Ready": "Done"}}]}, "conditions.Ready"),
        ({"controllers": [{"crd": "a.b", "retired-finalizers": [{"finalizer": "x/y"}]}]},
         "retired-finalizers[0]: migration is required"),
        ({"controllers": [{"crd": "a.b", "condition-breaks": [{"type": "T", "reason": "r",
                                                                "condition-reasons": []}]}]},
         "condition-reasons: must not be empty"),
    ],
)  # fmt: skip
def test_a_malformed_policy_is_refused_by_both(policy: Any, message: str) -> None:
    assert list(VALIDATOR.iter_errors(policy))
    with pytest.raises(PolicyError) as refused:
        parse_policy(policy, "policy.yaml")
    assert str(refused.value).startswith("policy.yaml: ") and message in str(refused.value)
