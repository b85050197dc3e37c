"""The engine carries a witness (or proven false) on every error of a CRD rule, through the
judge to the finding, and through the two-process diff's pickled changes."""

from __future__ import annotations

import pickle

from crd_builders import compare, crd, field_crd, version
from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding, Outcome, Severity

STR = {"type": "string"}


def only(outcome: Outcome, code: str) -> Finding:
    found = [f for f in outcome.findings if f.code == code]
    assert len(found) == 1, outcome.findings
    return found[0]


def test_a_property_rule_s_error_carries_its_witness() -> None:
    finding = only(
        compare(field_crd({**STR, "enum": ["a", "b"]}), field_crd({**STR, "enum": ["a"]})), "UG207"
    )
    assert finding.proven is True and finding.witness is not None
    assert finding.witness.operation == "create"
    assert finding.witness.stored["spec"] == {"field": "b"}
    assert finding.witness.stored["apiVersion"] == "example.com/v1"
    assert finding.witness.stored["kind"] == "Widget"


def test_an_error_without_a_witness_is_unproven_and_stays_an_error() -> None:
    """A map made atomic: only server-side apply's merges differ, no write or read shows it."""
    labels = {"type": "object", "additionalProperties": STR}
    old = field_crd({**labels, "x-kubernetes-map-type": "granular"})
    finding = only(compare(old, field_crd({**labels, "x-kubernetes-map-type": "atomic"})), "UG215")
    assert finding.severity is Severity.ERROR
    assert (finding.proven, finding.witness) == (False, None)


def test_a_ratcheted_warning_is_neither_proven_nor_unproven_but_keeps_its_witness() -> None:
    """The hook's evidence may make it an error again (a stored object holds the value)."""
    old, new = field_crd({**STR, "enum": ["a", "b"]}), field_crd({**STR, "enum": ["a"]})
    finding = only(compare(old, new, kube_version=(1, 35)), "UG207")
    assert finding.severity is Severity.WARNING
    assert finding.proven is None and finding.witness is not None


def test_crd_level_harms_of_another_kind() -> None:
    two = crd(version("v1alpha1", storage=False), version("v1"))
    unserved = only(compare(two, crd(version("v1"))), "UG105")
    assert unserved.witness is not None and unserved.proven is True
    assert (unserved.witness.version, unserved.witness.operation) == ("v1alpha1", "read")
    assert unserved.witness.apiserver == "refuses"
    removed = only(compare(two, None), "UG101")
    assert removed.witness is not None and removed.witness.version == "v1"
    stored = only(compare(crd(version("v1alpha1")), crd(version("v1"))), "UG104")
    assert stored.witness is not None and stored.witness.operation == "apply-crd"
    assert stored.witness.stored["apiVersion"] == "example.com/v1alpha1"


def test_witnesses_survive_the_trip_between_processes() -> None:
    old, new = field_crd({**STR, "enum": ["a", "b"]}), field_crd({**STR, "enum": ["a"]})
    changes = engine.changes_between({"w": Crd(old)}, {"w": Crd(new)})
    assert pickle.loads(pickle.dumps(changes)) == changes
    assert any(item.change.witness is not None for item in changes.raw)
