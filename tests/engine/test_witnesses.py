"""The engine carries a witness (or proven false) on every error of a CRD rule, through the
judge to the finding, and through the two-process diff's pickled changes."""

from __future__ import annotations

import pickle

from crd_builders import compare, crd, field_crd, obj, spec_schema, version
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
    """A map made atomic whose one field is required and an object: no second key for
    another manager to set, and the generator changes only a scalar or a list's key."""
    inner = {"type": "object", "properties": {"x": STR}}
    held = {"type": "object", "properties": {"a": inner}, "required": ["a"]}
    old = field_crd(held)
    finding = only(compare(old, field_crd({**held, "x-kubernetes-map-type": "atomic"})), "UG215")
    assert finding.severity is Severity.ERROR
    assert (finding.proven, finding.witness) == (False, None)


def test_a_map_type_change_is_witnessed_by_a_server_side_apply() -> None:
    """Granular -> atomic: witness-a's apply of its own map again conflicts with witness-b's
    key; atomic -> granular: the key witness-a leaves out is read back."""
    labels = {"type": "object", "additionalProperties": STR}
    atomic = {**labels, "x-kubernetes-map-type": "atomic"}
    made = only(compare(field_crd(labels), field_crd(atomic)), "UG215")
    assert made.proven is True and made.witness is not None
    assert made.witness.operation == "apply" and made.witness.apiserver == "refuses"
    assert made.witness.message == 'conflict with "witness-b": .spec.field'
    assert [entry["manager"] for entry in made.witness.applied or ()] == [
        "witness-a",
        "witness-b",
    ]
    assert made.witness.stored["spec"] == {"field": {"a": "a", "b": "a"}}
    assert made.witness.object is not None and made.witness.object["spec"] == {"field": {"a": "a"}}
    undone = only(compare(field_crd(atomic), field_crd(labels)), "UG215")
    assert undone.witness is not None and undone.witness.apiserver == "reads back changed"
    assert undone.witness.message == "add /spec/field/b"
    assert undone.witness.read_back == undone.witness.stored
    assert len(undone.witness.applied or ()) == 1


def test_a_map_whose_every_key_is_required_is_witnessed_by_a_changed_key() -> None:
    """witness-b applies the map less its one key (witness-a's holds the object valid);
    after the new CRD witness-a changes the key: a conflict with witness-b."""
    held = {"type": "object", "properties": {"a": STR}, "required": ["a"]}
    found = only(compare(field_crd(held), field_crd({**held, "x-kubernetes-map-type": "atomic"})),
                 "UG215")  # fmt: skip
    assert found.witness is not None and found.witness.apiserver == "refuses"
    assert [entry["object"]["spec"] for entry in found.witness.applied or ()] == [
        {"field": {"a": "a"}},
        {"field": {}},
    ]
    assert found.witness.object is not None
    assert found.witness.object["spec"] == {"field": {"a": "aa"}}


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


def test_served_versions_disagreeing_are_witnessed_at_the_version_read() -> None:
    """UG110: written at v1 while the old CRD is live, copied at v2 once the new CRD serves
    v2 with another schema and conversion None. Objects written at v2 before held a string,
    as v1 reads it: that way only what is written after the new CRD meets the harm, which a
    witness written at v2 once the new CRD is applied shows (``stored_under`` new), as it
    does where v1 was not served before."""
    s, i = {"type": "string"}, {"type": "integer"}
    both = crd(version("v1", spec_schema(x=s), storage=False), version("v2", spec_schema(x=s)))
    new = crd(version("v1", spec_schema(x=s), storage=False), version("v2", spec_schema(x=i)))
    found = {f.version: f for f in compare(both, new).findings if f.code == "UG110"}
    assert set(found) == {"v1->v2", "v2->v1"}
    forth = found["v1->v2"].witness
    assert found["v1->v2"].proven is True and forth is not None
    assert (forth.version, forth.read_version, forth.operation) == ("v1", "v2", "create")
    assert forth.stored_under is None
    back = found["v2->v1"].witness
    assert found["v2->v1"].proven is True and back is not None
    assert (back.version, back.read_version, back.stored_under) == ("v2", "v1", "new")
    only_v2 = crd(version("v2", spec_schema(x=s)))
    found = {f.version: f for f in compare(only_v2, new).findings if f.code == "UG110"}
    after = found["v1->v2"].witness
    assert after is not None and after.stored_under == "new"


def test_a_storage_move_a_rollback_cannot_undo_is_witnessed_by_the_rollback() -> None:
    """UG106: stored at the old storage version; once the new CRD is applied, the old CRD
    (which does not list v1) is refused. A move the old CRD lists, or a warning, has none."""
    new = crd(version("v1alpha1", storage=False), version("v1"))
    moved = only(compare(crd(version("v1alpha1")), new), "UG106")
    assert moved.proven is True and moved.witness is not None
    assert (moved.witness.version, moved.witness.operation) == ("v1alpha1", "apply-old-crd")
    assert moved.witness.stored["apiVersion"] == "example.com/v1alpha1"
    assert moved.witness.message == 'Invalid value: "v1": missing from spec.versions'
    both = crd(version("v1alpha1"), version("v1", storage=False))
    for later in (new, crd(version("v1alpha1", storage=False, served=False), version("v1"))):
        milder = only(compare(both, later), "UG106")
        assert milder.severity is not Severity.ERROR and milder.witness is None


def test_a_map_type_change_under_status_is_applied_through_the_subresource() -> None:
    """The version has the status subresource (crd_builders.version): the replay applies
    through /status, and the conflict names it."""
    labels = {"type": "object", "additionalProperties": STR}
    atomic = {**labels, "x-kubernetes-map-type": "atomic"}
    old = crd(version(schema=obj(spec=obj(), status=obj(m=labels))))
    new = crd(version(schema=obj(spec=obj(), status=obj(m=atomic))))
    found = only(compare(old, new), "UG215")
    assert found.witness is not None
    assert found.witness.message == (
        'conflict with "witness-b" with subresource "status": .status.m'
    )


def test_a_map_in_a_list_made_atomic_is_left_unproven() -> None:
    """The list holding the map becomes atomic too (UG214's): after the new CRD, server-side
    apply owns and names the list, so no apply witness at the map is built."""
    labels = {"type": "object", "additionalProperties": STR}
    keyed = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
    item = {"type": "object", "required": ["k"], "properties": {"k": STR, "m": labels}}
    atomic_item = {
        **item,
        "properties": {"k": STR, "m": {**labels, "x-kubernetes-map-type": "atomic"}},
    }
    old = field_crd({"type": "array", "items": item, **keyed})
    found = only(compare(old, field_crd({"type": "array", "items": atomic_item})), "UG215")
    assert (found.severity, found.proven, found.witness) == (Severity.ERROR, False, None)
