"""The replay's pure parts: the CRD as applied, a GET as the contract writes read_back, the
per-rule table (tools/testenv/replay.py)."""

from __future__ import annotations

from testenv.replay import Outcome, as_witnessed, prepared, table_text, tally

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "certs.example.io", "annotations": {"helm.sh/resource-policy": "keep"}},
    "spec": {
        "group": "example.io",
        "names": {"plural": "certs", "kind": "Cert"},
        "scope": "Namespaced",
        "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}},
        "versions": [],
    },
}


def test_the_crd_is_applied_under_the_replay_group_without_its_webhook() -> None:
    applied = prepared(CRD, "r3.example.io")
    assert applied["metadata"] == {"name": "certs.r3.example.io"}
    assert applied["spec"]["group"] == "r3.example.io"
    assert applied["spec"]["conversion"] == {"strategy": "None"}
    assert CRD["spec"]["group"] == "example.io"


def test_a_get_is_compared_as_the_contract_writes_read_back() -> None:
    read = {
        "apiVersion": "r3.example.io/v1",
        "kind": "Cert",
        "metadata": {
            "name": "w4",
            "namespace": "replay",
            "uid": "u",
            "resourceVersion": "7",
            "creationTimestamp": "2026-12-06T00:00:00Z",
            "generation": 1,
            "managedFields": [],
            "labels": {"a": "b"},
        },
        "spec": {"x": 1},
    }
    assert as_witnessed(read, "example.io", "r3.example.io") == {
        "apiVersion": "example.io/v1",
        "kind": "Cert",
        "metadata": {"name": "witness", "labels": {"a": "b"}},
        "spec": {"x": 1},
    }


def outcome(code: str, result: str) -> Outcome:
    return Outcome("p a -> b", "certs.example.io", code, "v1", "spec.x", result)


def test_the_table_counts_each_outcome_per_rule() -> None:
    outcomes = [
        outcome("UG201", "confirmed"),
        outcome("UG201", "no witness"),
        outcome("UG105", "refuted"),
        outcome("UG201", "not replayed"),
    ]
    assert tally(outcomes)["UG201"] == {
        "errors": 3,
        "confirmed": 1,
        "no witness": 1,
        "not replayed": 1,
    }
    assert table_text(outcomes).splitlines() == [
        "| rule  | errors | confirmed | refuted | not replayed | no witness |",
        "| ----  | ------ | --------- | ------- | ------------ | ---------- |",
        "| UG105 | 1      | 0         | 1       | 0            | 0          |",
        "| UG201 | 3      | 1         | 0       | 1            | 1          |",
        "| all   | 4      | 1         | 1       | 1            | 1          |",
    ]
