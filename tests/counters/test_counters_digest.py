"""The schema digest: pinned values, what leaves it alone, and every kind of change that moves it.

The change table has one row per engine rule (``rules.ALL_RULES``): each row makes the engine
report that rule and must change the digest of the CRD set. A rule added without a row fails
``test_every_rule_has_a_row``.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from crd_builders import crd, obj, spec_schema, version
from upgrade_guard import engine, rules
from upgrade_guard.counters import digest, history
from upgrade_guard.crd import Crd
from upgrade_guard.load.yaml_reader import read_documents
from upgrade_guard.rules.kinds import HistoryCheck, HookCheck, LifecycleRule, RoleCheck

Body = dict[str, Any]
STRING = {"type": "string"}


def base() -> Body:
    """A CRD with something for every rule to change: two served versions, v1 stored, and an
    unserved one."""
    fields = {
        "size": {"type": "string"},
        "name": {"type": "string"},
        "count": {"type": "integer", "minimum": 0},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "level": {"type": "string", "default": "low"},
        "ports": {"type": "array", "items": STRING, "x-kubernetes-list-type": "atomic"},
        "labels": {"type": "object", "additionalProperties": STRING},
        "ratio": {"type": "number", "nullable": True},
        "port": {"x-kubernetes-int-or-string": True},
        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "template": obj(a=STRING),
        "choice": {"type": "string"},
        "replicas": {"type": "integer"},
    }
    extra = {
        "subresources": {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
            },
        },
        "selectableFields": [{"jsonPath": ".spec.size"}],
    }
    schema = spec_schema(**fields)
    return crd(
        version("v1", schema, **copy.deepcopy(extra)),
        version("v1beta1", schema, storage=False, **copy.deepcopy(extra)),
        version("v1alpha1", schema, storage=False, served=False),
        stored=["v1", "v1beta1"],
    )


def field(body: Body, name: str, served: str = "v1") -> dict[str, Any]:
    for entry in body["spec"]["versions"]:
        if entry["name"] == served:
            node: dict[str, Any] = entry["schema"]["openAPIV3Schema"]["properties"]["spec"]
            return node if name == "" else node["properties"][name]
    raise KeyError(served)


def v1(body: Body) -> dict[str, Any]:
    entry: dict[str, Any] = body["spec"]["versions"][0]
    return entry


def _set(path: Callable[[Body], dict[str, Any]], **values: Any) -> Callable[[Body], None]:
    return lambda body: path(body).update(values)


def _drop(path: Callable[[Body], dict[str, Any]], key: str) -> Callable[[Body], None]:
    return lambda body: path(body).pop(key)


def _webhook(body: Body) -> None:
    body["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "conv", "namespace": "system"}},
        },
    }


def _remove_version(body: Body) -> None:
    body["spec"]["versions"] = body["spec"]["versions"][:1]


def _move_storage(body: Body) -> None:
    body["spec"]["versions"][0]["storage"] = False
    body["spec"]["versions"][1]["storage"] = True


REMOVED = object()  # the row for crd-removed: the new set has no CRD at all

# code -> how to make the engine report it (rule UG902 is about the policy, not a change)
CHANGES: dict[str, Callable[[Body], None] | object] = {
    "UG101": REMOVED,
    "UG102": lambda b: b["spec"]["names"].update(kind="Gadget", listKind="GadgetList"),
    "UG103": lambda b: b["spec"].update(scope="Cluster"),
    "UG104": _remove_version,
    "UG105": lambda b: b["spec"]["versions"][1].update(served=False),
    "UG106": _move_storage,
    "UG107": lambda b: b["spec"]["names"].update(shortNames=[]),
    "UG108": _webhook,
    "UG109": lambda b: v1(b)["subresources"].pop("status"),
    "UG110": lambda b: field(b, "size", "v1beta1").update(type="integer"),
    "UG111": lambda b: v1(b).pop("selectableFields"),
    "UG112": lambda b: v1(b)["subresources"]["scale"].update(specReplicasPath=".spec.size"),
    "UG113": lambda b: b["spec"]["versions"].pop(2),
    "UG201": lambda b: field(b, "")["properties"].pop("size"),
    "UG202": lambda b: field(b, "").update(required=["size"]),
    "UG203": lambda b: (
        field(b, "name").update(default="x"),
        field(b, "").update(required=["name"]),
    ),
    "UG204": _set(lambda b: field(b, "count"), type="string"),
    "UG205": _drop(lambda b: field(b, "ratio"), "nullable"),
    "UG206": lambda b: field(b, "").update(
        properties={**field(b, "")["properties"], "port": STRING}
    ),
    "UG207": _set(lambda b: field(b, "mode"), enum=["a"]),
    "UG208": _set(lambda b: field(b, "count"), minimum=1),
    "UG209": _set(lambda b: field(b, "count"), multipleOf=2),
    "UG210": _set(lambda b: field(b, "size"), format="email"),
    "UG211": _set(lambda b: field(b, "size"), pattern="^a"),
    "UG212": _set(lambda b: field(b, "mode"), default="a"),
    "UG213": _set(
        lambda b: field(b, ""), **{"x-kubernetes-validations": [{"rule": "self.count > 0"}]}
    ),
    "UG214": _set(lambda b: field(b, "ports"), **{"x-kubernetes-list-type": "set"}),
    "UG215": _set(lambda b: field(b, "labels"), **{"x-kubernetes-map-type": "atomic"}),
    "UG216": _drop(lambda b: field(b, "raw"), "x-kubernetes-preserve-unknown-fields"),
    "UG217": _set(lambda b: field(b, "template"), **{"x-kubernetes-embedded-resource": True}),
    "UG218": _set(lambda b: field(b, "choice"), allOf=[{"minLength": 1}]),
    "UG219": _set(lambda b: field(b, "level"), default="high"),
    "UG901": _set(lambda b: field(b, "ports"), uniqueItems=True),
}
NOT_A_CHANGE = {"UG902", "UG903"}  # about declarations and acceptances, not the schema


def set_digests(bodies: list[Body]) -> dict[str, str]:
    return history.digests_of({b["metadata"]["name"]: Crd(b) for b in bodies})


def engine_codes(old: list[Body], new: list[Body]) -> set[str]:
    def crds(bodies: list[Body]) -> dict[str, Crd]:
        return history.normalized({b["metadata"]["name"]: Crd(b) for b in bodies})

    return {f.code for f in engine.compare_crds(crds(old), crds(new)).findings}


def test_every_rule_has_a_row() -> None:
    engine_rules = {
        r.code
        for r in rules.ALL_RULES
        if not isinstance(r, HistoryCheck | LifecycleRule | HookCheck | RoleCheck)
    }
    missing = engine_rules - set(CHANGES) - NOT_A_CHANGE
    assert not missing, f"add a row for {sorted(missing)}"


def test_the_base_compares_clean_with_itself() -> None:
    assert engine_codes([base()], [base()]) == set()


@pytest.mark.parametrize("code", sorted(CHANGES))
def test_each_kind_of_change_the_engine_reports_changes_the_digest(code: str) -> None:
    assert code in rules.BY_CODE, f"a row for {code}, which is no rule: drop the row"
    old = base()
    change = CHANGES[code]
    if change is REMOVED:
        new: list[Body] = []
    else:
        body = copy.deepcopy(old)
        change(body)  # type: ignore[operator]
        new = [body]
    assert code in engine_codes([old], new), "the row must make the engine report its rule"
    assert set_digests([old]) != set_digests(new)


# ------------------------------------------------------------------ what leaves it alone


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(item) for item in value]
    return value


def _document_everything(body: Body) -> None:
    field(body, "").update(description="The widget's spec.", title="Spec")
    field(body, "size").update(description="How big.", example="10Gi")
    field(body, "count").update(externalDocs={"url": "https://example.com"})
    v1(body)["schema"]["openAPIV3Schema"]["description"] = "A widget."
    field(body, "ports")["items"] = {"type": "string", "description": "one port"}


def _spell_out_defaults(body: Body) -> None:
    body["spec"]["conversion"] = {"strategy": "None"}
    body["spec"]["preserveUnknownFields"] = False
    v1(body)["deprecated"] = False
    field(body, "size")["nullable"] = False
    field(body, "")["required"] = []


def _leave_out_defaults(body: Body) -> None:
    names = body["spec"]["names"]
    del names["singular"], names["listKind"]
    del body["spec"]["versions"][1]["storage"]  # false


def _floats(body: Body) -> None:
    field(body, "count")["minimum"] = 0.0


UNCHANGED: dict[str, Callable[[Body], Any]] = {
    "key order": _reverse_keys,
    "description, title, example, externalDocs": _document_everything,
    "defaults spelled out": _spell_out_defaults,
    "defaults left out": _leave_out_defaults,
    "integral float": _floats,
    "nulls": lambda b: (
        field(b, "size").update(format=None, default=None, items=None),
        field(b, "labels")["additionalProperties"].update(pattern=None),
        v1(b).update(deprecationWarning=None, additionalPrinterColumns=None),
        b["spec"].update(conversion=None, preserveUnknownFields=None),
        b["spec"]["versions"][1].update(storage=None),
    ),
    "metadata and status": lambda b: (
        b["metadata"].update(annotations={"a": "b"}, labels={"x": "y"}),
        b.update(status={"storedVersions": ["v1"]}),
    ),
}


@pytest.mark.parametrize("edit", sorted(UNCHANGED))
def test_digest_is_unchanged_by(edit: str) -> None:
    body = copy.deepcopy(base())
    result = UNCHANGED[edit](body)
    if isinstance(result, dict):
        body = result
    assert set_digests([body]) == set_digests([base()])
    assert engine_codes([base()], [body]) == set()


def test_digest_is_unchanged_by_reformatting_the_file() -> None:
    block = yaml.safe_dump(base(), sort_keys=False)
    commented = "# generated\n" + block.replace("group: example.com", "group: 'example.com' # g")
    flow = yaml.safe_dump(base(), default_flow_style=True)
    as_json = json.dumps(base(), indent=2)
    yaml_11 = block.replace("served: true", "served: yes").replace("storage: false", "storage: off")
    digests = {
        name: digest.spec_digest(next(read_documents(text))[1]["spec"])
        for name, text in {
            "block": block,
            "commented": commented,
            "flow": flow,
            "json": as_json,
            "yaml 1.1 booleans": yaml_11,
        }.items()
    }
    assert len(set(digests.values())) == 1, digests


# ------------------------------------------------------------------ the definition, pinned


def test_the_digest_of_a_small_crd_is_pinned() -> None:
    spec = crd()["spec"]
    expected_json = (
        '{"conversion":{"strategy":"None"},"group":"example.com","names":{"kind":"Widget",'
        '"listKind":"WidgetList","plural":"widgets","shortNames":["wd"],"singular":"widget"},'
        '"scope":"Namespaced","versions":[{"name":"v1","schema":{"openAPIV3Schema":'
        '{"properties":{"spec":{"type":"object"}},"type":"object"}},"served":true,'
        '"storage":true,"subresources":{"status":{}}}]}'
    )
    assert digest.canonical_json(digest.normalized_spec(spec)) == expected_json
    assert digest.spec_digest(spec) == (
        "sha256:b4f1680dea36c5b82aa0a02198faeb28ac7289c3bb903f2db8c9f9aa4238f2d4"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1, "1"),
        (1.0, "1"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (123456789.125, "123456789.125"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (2**63 - 1, "9223372036854776000"),
        ('a"\\\n\t\x01é', '"a\\"\\\\\\n\\t\\u0001é"'),
        ({"b": 1, "a": [True, None]}, '{"a":[true,null],"b":1}'),
    ],
)
def test_canonical_json(value: Any, text: str) -> None:
    assert digest.canonical_json(value) == text


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_numbers_kubernetes_cannot_store_are_refused(bad: float) -> None:
    with pytest.raises(digest.DigestError):
        digest.canonical_json({"minimum": bad})


def test_nulls_inside_default_and_enum_are_data() -> None:
    with_null, without = copy.deepcopy(base()), copy.deepcopy(base())
    field(with_null, "labels")["default"] = {"a": None}
    field(without, "labels")["default"] = {}
    assert set_digests([with_null]) != set_digests([without])


def test_webhook_service_port_defaults_to_443() -> None:
    with_port = copy.deepcopy(base())
    without = copy.deepcopy(base())
    _webhook(with_port)
    _webhook(without)
    with_port["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] = 443
    assert set_digests([with_port]) == set_digests([without])
    with_port["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] = 8443
    assert set_digests([with_port]) != set_digests([without])


def test_a_digest_is_sha256_in_lowercase_hex() -> None:
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest.spec_digest(crd()["spec"]))
