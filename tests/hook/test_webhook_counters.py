"""UG402, pure: a live webhook configuration's counters against the chart's, each refusal
beside the nearest case that passes; and which live objects the hook reads (bad input, exit
2, for one the library does not grant)."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.crd import Source
from upgrade_guard.judging import Changes, Placed, judge
from upgrade_guard.load.documents import LoadError
from upgrade_guard.manifests import Manifests, PolicyRule, Role, WebhookConfiguration
from upgrade_guard.pipelines.hook_run import live_wanted
from upgrade_guard.rules import webhook_counter_below_live
from upgrade_guard.subjects import HookSubject

CONTRACT = "upgrade-guard.io/admission-contract"
STATE = "upgrade-guard.io/controller-state-version"
KEYS = {"admission-contract": CONTRACT, "controller-state-version": STATE}
AC, CS = "admission-contract", "controller-state-version"
KEY = "ValidatingWebhookConfiguration operator"


def webhook(**annotations: str) -> WebhookConfiguration:
    raw: dict[str, Any] = {"metadata": {"name": "operator", "annotations": annotations}}
    return WebhookConfiguration("ValidatingWebhookConfiguration", raw, Source("test"))


def at(contract: int) -> WebhookConfiguration:
    return webhook(**{CONTRACT: str(contract)})


CASES = [
    # (id, the chart's counters, the chart's webhook, the live one, refused)
    ("live contract above", {AC: 2}, webhook(), at(3), True),
    ("live contract equal", {AC: 3}, webhook(), at(3), False),
    ("live contract below: an upgrade", {AC: 4}, webhook(), at(3), False),
    ("chart's own annotation below", {}, at(2), at(3), True),
    ("chart's own annotation equal", {}, at(3), at(3), False),
    ("live not stamped: first adoption", {AC: 1}, webhook(), webhook(), False),
    ("live state version above", {CS: 1}, webhook(), webhook(**{STATE: "2"}), True),
    ("live state version equal", {CS: 2}, webhook(), webhook(**{STATE: "2"}), False),
    ("live not canonical: not read", {AC: 1}, webhook(), webhook(**{CONTRACT: "03"}), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("counters", "ours", "live", "refused"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_live_webhook_counters(
    counters: dict[str, int], ours: WebhookConfiguration, live: WebhookConfiguration, refused: bool
) -> None:
    subject = HookSubject(
        chart_counters=counters,
        webhooks={KEY: ours},
        live_webhooks={KEY: live},
        counter_keys=KEYS,
    )
    changes = [(key, change) for key, change in webhook_counter_below_live.RULE.check(subject)]
    assert [key for key, _ in changes] == ([KEY] if refused else [])
    if refused:
        placed = [Placed(webhook_counter_below_live.RULE, k, None, None, c) for k, c in changes]
        outcome = judge(Changes(tuple(placed)))
        assert [f.code for f in outcome.findings] == ["UG402"] and not outcome.safe


ROLE = Role(
    "ClusterRole", "operator", "", (PolicyRule(("get",), ("",), ("pods",)),), False, Source("t")
)
PLAIN = WebhookConfiguration(
    "MutatingWebhookConfiguration", {"metadata": {"name": "p"}}, Source("")
)
CONTRACTS = Manifests({ROLE.key: ROLE}, {KEY: webhook(**{CONTRACT: "1"}), PLAIN.key: PLAIN})


def test_the_hook_reads_its_clusterroles_and_the_webhooks_carrying_counters() -> None:
    assert live_wanted(CONTRACTS, KEYS, None) == {
        "clusterroles": ["operator"],
        "validatingwebhookconfigurations": ["operator"],
    }
    readable = {"clusterroles/operator", "validatingwebhookconfigurations/operator"}
    assert live_wanted(CONTRACTS, KEYS, readable) == live_wanted(CONTRACTS, KEYS, None)


@pytest.mark.parametrize(
    ("readable", "annotation"),
    [
        ({"validatingwebhookconfigurations/operator"}, "rbac-templates"),
        ({"clusterroles/operator"}, "webhook-templates"),
    ],
)
def test_an_object_the_library_does_not_grant_is_bad_input(
    readable: set[str], annotation: str
) -> None:
    with pytest.raises(LoadError, match=f"Chart.yaml's upgrade-guard.io/{annotation}"):
        live_wanted(CONTRACTS, KEYS, readable)
