"""UG215 map-type-changed held to the real kube-apiserver: what a change of
``x-kubernetes-map-type`` does to server-side apply, the one thing it changes.

Each row: under the old CRD, field managers apply the map in turn (``B`` with force where
the old map is atomic and it would conflict); the new CRD is applied; then manager ``A``
applies again, with and without force. Beside each row, the same sequence with the map
type unchanged: what the manager met before. From granular to atomic, the objects' field
sets are reconciled with the new schema (each manager owns the whole map), and ``A``'s
apply of its own unchanged map conflicts with ``B``, or, forced, drops the key ``B``
set. From atomic to granular, a manager that applied the whole map keeps owning it as a
leaf: when it applies the map again with a key left out, the key is kept (an atomic map
drops it), and an apply merges key by key where an atomic map conflicted. Inside the items
of an atomic list (no list type) the map type changes nothing: the list is owned whole.
A CREATE, UPDATE or GET of the object is the same under either map type.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from testenv import Cluster, CRDTrial, truth
from testenv.kube import KubeError
from testenv.truth import crd_body, root_schema, version_entry

STR = {"type": "string"}
MAP = {"type": "object", "additionalProperties": {"type": "string"}}
STRUCT = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
CONFLICT = 'Apply failed with 1 conflict: conflict with "B": .spec.m'
IN_MAP_LIST = CONFLICT.replace(".spec.m", '.spec.l[name="x"].m')
ON_LIST = CONFLICT.replace(".spec.m", ".spec.l")


def _node(shape: dict[str, Any], map_type: str) -> dict[str, Any]:
    return {**shape, "x-kubernetes-map-type": map_type} if map_type == "atomic" else shape


def _in(container: str, node: dict[str, Any]) -> dict[str, Any]:
    """The schema of spec: ``m`` the map, or ``l`` a list of items ``{name, m}``, atomic (no
    list type) or a map list keyed by name."""
    if container == "field":
        return {"m": node}
    item = {"type": "object", "required": ["name"], "properties": {"name": STR, "m": node}}
    listed: dict[str, Any] = {"type": "array", "items": item}
    if container == "map list":
        listed.update({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})
    return {"l": listed}


def _wrapped(container: str, m: dict[str, str]) -> dict[str, Any]:
    return {"m": m} if container == "field" else {"l": [{"name": "x", "m": m}]}


def _unwrapped(spec: dict[str, Any]) -> Any:
    return spec["m"] if "m" in spec else spec["l"][0]["m"]


def _crd(group: str, node: dict[str, Any], container: str = "field") -> dict[str, Any]:
    body = crd_body("maps", [version_entry("v1", root_schema(_in(container, node)))])
    body["spec"]["group"] = group
    body["metadata"]["name"] = f"maps.{group}"
    return body


def _apply(
    trial: CRDTrial, m: dict[str, str], manager: str, force: bool = False, container: str = "field"
) -> Any:
    body = {
        "apiVersion": f"{trial.crd['spec']['group'] if trial.crd else ''}/v1",
        "kind": "Map",
        "metadata": {"name": "w"},
        "spec": _wrapped(container, m),
    }
    try:
        applied = trial.kube.apply(trial.path("v1", "w"), body, manager, force=force)
        return _unwrapped(applied["spec"])
    except KubeError as err:
        assert err.code == 409, err
        return err.message


def _sequence(
    cluster: Cluster,
    shape: dict[str, Any],
    types: tuple[str, str],
    applies: tuple[dict[str, str], ...],
    again: dict[str, str],
    container: str = "field",
) -> tuple[Any, Any, bool]:
    """A's apply of ``again`` after the new CRD, without force and with it; whether a GET
    reads the object back as it was (spec and managedFields)."""
    got: list[Any] = []
    unchanged = True
    for force in (False, True):
        group = f"m{time.monotonic_ns()}.{truth.GROUP}"
        trial = CRDTrial(cluster.admin, "map-type")
        trial.apply_crd(_crd(group, _node(shape, types[0]), container))
        try:
            for manager, m in zip("AB", applies, strict=False):
                if isinstance(_apply(trial, m, manager, container=container), str):
                    _apply(trial, m, manager, force=True, container=container)
            before = trial.get("w", version="v1")
            trial.apply_crd(_crd(group, _node(shape, types[1]), container))
            after = trial.get("w", version="v1")
            unchanged &= (
                all(before[k] == after[k] for k in ("spec",))
                and before["metadata"]["managedFields"] == after["metadata"]["managedFields"]
            )
            got.append(_apply(trial, again, "A", force=force, container=container))
        finally:
            trial.delete_crd()
    return got[0], got[1], unchanged


A1, B2 = {"a": "1"}, {"b": "2"}
AB = {"a": "1", "b": "2"}
# (map type old -> new, the managers' applies, A's apply after, without force, forced)
ROWS = [
    # two managers, each its own key: A's unchanged apply conflicts, forced drops B's key
    (("granular", "atomic"), (A1, B2), A1, CONFLICT, A1),
    (("granular", "granular"), (A1, B2), A1, AB, AB),
    # A changes its key: the same
    (("granular", "atomic"), (A1, B2), {"a": "3"}, CONFLICT, {"a": "3"}),
    (("granular", "granular"), (A1, B2), {"a": "3"}, {"a": "3", "b": "2"}, {"a": "3", "b": "2"}),
    # one manager that set both keys drops one: no one else to conflict with
    (("granular", "atomic"), (AB,), A1, A1, A1),
    (("granular", "granular"), (AB,), A1, A1, A1),
    # atomic -> granular: nothing refused; where the atomic map conflicts
    # (B forced it, A's apply would replace it whole), the granular one merges A's key
    (("atomic", "granular"), (A1, B2), A1, AB, AB),
    (("atomic", "atomic"), (A1, B2), A1, CONFLICT, A1),
    # both own the whole map, A drops a key: B still holds it, kept (as a granular map
    # keeps a key another manager applied); atomic conflicts
    (("atomic", "granular"), (AB, AB), A1, AB, AB),
    (("atomic", "atomic"), (AB, AB), A1, CONFLICT, A1),
    # one manager drops a key it set: the granular map keeps it (the manager owned the
    # map as a whole, not the key), the atomic one drops it
    (("atomic", "granular"), (AB,), A1, AB, AB),
    (("atomic", "atomic"), (AB,), A1, A1, A1),
]


@pytest.mark.parametrize("shape", [MAP, STRUCT], ids=["additionalProperties", "properties"])
@pytest.mark.parametrize(
    ("types", "applies", "again", "plain", "forced"),
    ROWS,
    ids=[f"{t[0]}->{t[1]}-{len(a)}-{i}" for i, (t, a, *_) in enumerate(ROWS)],
)
def test_server_side_apply_after_map_type_change(
    cluster: Cluster,
    shape: dict[str, Any],
    types: tuple[str, str],
    applies: tuple[dict[str, str], ...],
    again: dict[str, str],
    plain: Any,
    forced: Any,
) -> None:
    got = _sequence(cluster, shape, types, applies, again)
    assert got == (plain, forced, True)


# The map inside the items of a list: a map list's items merge by key, and the map in them
# as a field does; an atomic list (no list type) is owned and replaced whole, whatever the
# map type inside its items: nothing changes (the rule's info).
IN_LISTS = [
    ("map list", ("granular", "atomic"), (A1, B2), A1, IN_MAP_LIST, A1),
    ("map list", ("granular", "granular"), (A1, B2), A1, AB, AB),
    ("atomic list", ("granular", "atomic"), (A1, B2), A1, ON_LIST, A1),
    ("atomic list", ("granular", "granular"), (A1, B2), A1, ON_LIST, A1),
    ("map list", ("atomic", "granular"), (AB,), A1, AB, AB),
    ("map list", ("atomic", "atomic"), (AB,), A1, A1, A1),
    ("atomic list", ("atomic", "granular"), (AB,), A1, A1, A1),
    ("atomic list", ("atomic", "atomic"), (AB,), A1, A1, A1),
]  # fmt: skip


@pytest.mark.parametrize(
    ("container", "types", "applies", "again", "plain", "forced"),
    IN_LISTS,
    ids=[f"{c}-{t[0]}->{t[1]}" for c, t, *_ in IN_LISTS],
)
def test_a_map_in_list_items(
    cluster: Cluster,
    container: str,
    types: tuple[str, str],
    applies: tuple[dict[str, str], ...],
    again: dict[str, str],
    plain: Any,
    forced: Any,
) -> None:
    got = _sequence(cluster, MAP, types, applies, again, container)
    assert got == (plain, forced, True)


@pytest.mark.parametrize("types", [("granular", "atomic"), ("atomic", "granular")])
def test_create_update_get_do_not_differ(cluster: Cluster, types: tuple[str, str]) -> None:
    """Written with CREATE and UPDATE (no apply), the object reads, updates and is copied
    alike under either map type."""
    group = f"m{time.monotonic_ns()}.{truth.GROUP}"
    trial = CRDTrial(cluster.admin, "map-type")
    trial.apply_crd(_crd(group, _node(MAP, types[0])))
    try:
        body = {"kind": "Map", "metadata": {"name": "w"}, "spec": {"m": AB}}
        trial.create(body, version="v1").expect_allowed()
        trial.apply_crd(_crd(group, _node(MAP, types[1])))
        assert trial.get("w", version="v1")["spec"] == {"m": AB}
        updated = trial.update("w", lambda o: o["spec"].update(m=A1), version="v1")
        assert updated.expect_allowed()["spec"] == {"m": A1}
        copied = trial.create({**body, "metadata": {"name": "copy"}}, version="v1")
        assert copied.expect_allowed()["spec"] == {"m": AB}
    finally:
        trial.delete_crd()
