"""CRD- and version-level rules as paired tables: each refusal beside the nearest allowed change."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from crd_builders import compare, crd, flagged, obj, spec_schema, version

Edit = Callable[[dict[str, Any]], None]


def edited(base: dict[str, Any], edit: Edit) -> dict[str, Any]:
    changed = copy.deepcopy(base)
    edit(changed)
    return changed


def names(**values: Any) -> Edit:
    return lambda body: body["spec"]["names"].update(values)


def spec(**values: Any) -> Edit:
    return lambda body: body["spec"].update(values)


def no_status_subresource(body: dict[str, Any]) -> None:
    body["spec"]["versions"][0].pop("subresources")


def scale_subresource(body: dict[str, Any]) -> None:
    body["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
    }


def printer_column(body: dict[str, Any]) -> None:
    body["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    ]


BASE = crd()
TWO_VERSIONS = crd(version("v1alpha1", storage=False), version("v1"))

SINGLE_CRD_CASES = [
    pytest.param(BASE, names(kind="Gadget"), {("UG102", None)}, id="kind changed: flagged"),
    pytest.param(BASE, names(singular="gizmo"), set(), id="singular changed: not flagged"),
    pytest.param(BASE, spec(scope="Cluster"), {("UG103", None)}, id="scope changed: flagged"),
    pytest.param(BASE, names(shortNames=[]), {("UG107", None)}, id="short name removed: warned"),
    pytest.param(BASE, names(shortNames=["wd", "wdg"]), set(), id="short name added: not flagged"),
    pytest.param(BASE, names(categories=["all"]), set(), id="categories added: not flagged"),
    pytest.param(
        BASE,
        spec(conversion={"strategy": "None"}),
        set(),
        id="conversion None written out: not flagged",
    ),
    pytest.param(
        BASE, no_status_subresource, {("UG109", None)}, id="status subresource removed: flagged"
    ),
    pytest.param(BASE, printer_column, set(), id="printer column added: not flagged"),
    pytest.param(BASE, scale_subresource, set(), id="scale subresource added: not flagged"),
]


@pytest.mark.parametrize(("old", "edit", "expected"), SINGLE_CRD_CASES)
def test_crd_change(old: dict[str, Any], edit: Edit, expected: set[tuple[str, None]]) -> None:
    assert flagged(old, edited(old, edit)) == expected


def test_crd_removed_is_flagged_and_crd_added_is_not() -> None:
    assert flagged(BASE, None) == {("UG101", None)}
    assert flagged(None, BASE) == set()


VERSION_CASES = [
    pytest.param(
        crd(version("v1alpha1", storage=False), version("v1")),
        crd(version("v1")),
        {("UG105", None)},
        id="served version removed, never the storage version: flagged as unserved only",
    ),
    pytest.param(
        crd(version("v1alpha1", storage=False), version("v1"), stored=["v1alpha1", "v1"]),
        crd(version("v1")),
        {("UG104", None), ("UG105", None)},
        id="version in storedVersions removed: flagged",
    ),
    pytest.param(
        crd(version("v1alpha1", storage=False), version("v1"), stored=["v1alpha1", "v1"]),
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        {("UG105", None)},
        id="stored version kept but unserved: only the unserving is flagged",
    ),
    pytest.param(
        crd(version("v1")),
        crd(version("v2")),
        {("UG104", None), ("UG105", None), ("UG106", None)},
        id="storage version replaced without status: the storage version counts as stored",
    ),
    pytest.param(
        crd(version("v1")),
        crd(version("v1"), version("v2", storage=False)),
        set(),
        id="served version added with the same schema: not flagged",
    ),
    pytest.param(
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        crd(version("v1")),
        {("UG113", None)},
        id="unserved version removed: warned",
    ),
    pytest.param(
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        set(),
        id="unserved version kept listed: not flagged",
    ),
    pytest.param(
        crd(
            version("v1alpha1", storage=False, served=False),
            version("v1"),
            stored=["v1alpha1", "v1"],
        ),
        crd(version("v1")),
        {("UG104", None)},
        id="unserved stored version removed: refused by the apiserver only",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), VERSION_CASES)
def test_version_change(old: dict[str, Any], new: dict[str, Any], expected: set[Any]) -> None:
    assert flagged(old, new) == expected


STORAGE_MOVES = [
    pytest.param(
        crd(version("v1alpha1")),
        crd(version("v1alpha1", storage=False), version("v1")),
        {("UG106", "error")},
        id="storage moved to a version first served now: flagged",
    ),
    pytest.param(
        crd(version("v1alpha1"), version("v1", storage=False)),
        crd(version("v1alpha1", storage=False), version("v1")),
        {("UG106", "info")},
        id="storage moved to a version served before, the old one still served: info",
    ),
    pytest.param(
        crd(version("v1alpha1"), version("v1", storage=False, served=False)),
        crd(version("v1alpha1", storage=False), version("v1")),
        {("UG106", "info")},
        id="storage moved to a version listed but not served before: a rollback's CRD lists it",
    ),
    pytest.param(
        crd(version("v1alpha1")),
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        {("UG105", "error"), ("UG106", "error")},
        id="storage moved to a version first served now, the old one unserved: flagged",
    ),
    pytest.param(
        crd(version("v1alpha1"), version("v1", storage=False)),
        crd(version("v1alpha1", storage=False, served=False), version("v1")),
        {("UG105", "error"), ("UG106", "warning")},
        id="storage moved in the release that stops serving the old one: UG105's harm, warned",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), STORAGE_MOVES)
def test_storage_move(old: dict[str, Any], new: dict[str, Any], expected: set[Any]) -> None:
    """Kubernetes' deprecation rule 4b: storage advances to a version already served."""
    assert {(f.code, str(f.severity)) for f in compare(old, new).findings} == expected


WEBHOOK = {
    "strategy": "Webhook",
    "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://x"}},
}
NONE = {"strategy": "None"}
SAME = spec_schema(field={"type": "string"})
DOCUMENTED = spec_schema(field={"type": "string", "description": "a field"})
WIDER = spec_schema(field={"type": "string"}, extra={"type": "string"})


def pair(first: dict[str, Any], second: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
    """v1alpha1 with the first schema beside v1, the storage version, with the second."""
    return [
        version("v1alpha1", schema=first, storage=False, **extra),
        version("v1", schema=second),
    ]


def to_none(
    versions: list[dict[str, Any]],
    stored: list[str] | None = None,
    after: list[dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The CRD under Webhook (objects stored as given), and with strategy None and the
    versions after (the same by default)."""
    return crd(*versions, conversion=WEBHOOK, stored=stored), crd(
        *(after or versions), conversion=NONE
    )


def to_webhook(
    versions: list[dict[str, Any]], stored: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    return crd(*versions, conversion=NONE, stored=stored), crd(*versions, conversion=WEBHOOK)


ONE = [version()]
STORED_BOTH = ["v1alpha1", "v1"]

CONVERSION_CHANGES = [
    pytest.param(*to_none(ONE), "info", id="to None, one version: info"),
    pytest.param(
        *to_none(pair(SAME, SAME)), "info", id="to None, two served versions, one schema: info"
    ),
    pytest.param(
        *to_none(pair(SAME, SAME), after=pair(DOCUMENTED, SAME)),
        "info",
        id="to None, two served versions differing in descriptions only: info",
    ),
    pytest.param(
        *to_none(pair(SAME, WIDER)),
        "error",
        id="to None, two served versions whose schemas differ: flagged",
    ),
    pytest.param(
        *to_none(pair(SAME, WIDER, served=False)),
        "info",
        id="to None, a differing version neither served nor stored: info",
    ),
    pytest.param(
        *to_none(pair(SAME, WIDER, served=False), STORED_BOTH),
        "error",
        id="to None, objects stored at a version whose schema differs: flagged",
    ),
    pytest.param(*to_webhook(ONE), "info", id="to Webhook, one version: info"),
    pytest.param(
        *to_webhook(pair(SAME, SAME, served=False)),
        "info",
        id="to Webhook, the storage version served alone: info",
    ),
    pytest.param(
        *to_webhook(pair(SAME, SAME)), "error", id="to Webhook, a second version served: flagged"
    ),
    pytest.param(
        *to_webhook(pair(SAME, SAME, served=False), STORED_BOTH),
        "error",
        id="to Webhook, objects stored at another version: flagged",
    ),
]


@pytest.mark.parametrize(("old", "new", "severity"), CONVERSION_CHANGES)
def test_conversion_strategy_change(
    old: dict[str, Any], new: dict[str, Any], severity: str
) -> None:
    """Harm where reads change (to None across differing schemas) or depend on the webhook
    (to Webhook with reads across versions); any other switch is info."""
    found = compare(old, new).findings
    assert {(f.code, f.version, f.path, str(f.severity)) for f in found} == {
        ("UG108", None, None, severity)
    }


def test_conversion_to_none_names_the_versions_and_where_their_schemas_differ() -> None:
    [finding] = compare(*to_none(pair(SAME, WIDER))).findings
    assert "v1alpha1 and v1 (at spec.extra)" in finding.message


def test_served_versions_that_disagree_under_conversion_none_are_flagged_once_new() -> None:
    loose = spec_schema(field={"type": "string"})
    strict = spec_schema(field={"type": "string", "maxLength": 3})
    old = crd(version("v1", schema=loose))
    new = crd(version("v1", schema=loose), version("v2", schema=strict, storage=False))
    assert flagged(old, new) == {("UG110", "spec.field")}
    finding = compare(old, new).findings[0]
    assert finding.version == "v1->v2"
    assert "UG208" in finding.message
    already_disagreeing = crd(
        version("v1", schema=loose), version("v2", schema=strict, storage=False)
    )
    assert flagged(already_disagreeing, already_disagreeing) == set()


def test_schema_changes_are_compared_for_every_served_version() -> None:
    old = crd(
        version("v1alpha1", schema=spec_schema(a=obj()), storage=False),
        version("v1", schema=spec_schema(a=obj())),
    )
    new = crd(
        version("v1alpha1", schema=spec_schema(), storage=False),
        version("v1", schema=spec_schema()),
    )
    findings = compare(old, new).findings
    assert {(f.code, f.version, f.path) for f in findings} == {
        ("UG201", "v1alpha1", "spec.a"),
        ("UG201", "v1", "spec.a"),
    }


@pytest.mark.parametrize(
    ("served", "stored", "expected"),
    [
        pytest.param(
            False, [], {("UG110", "v1->v2", "spec.field")}, id="neither served nor stored"
        ),
        pytest.param(True, [], {("UG208", "v2", "spec.field")}, id="served"),
        pytest.param(False, ["v2", "v1"], {("UG208", "v2", "spec.field")}, id="stored at"),
    ],
)
def test_a_version_is_judged_by_its_old_schema_only_where_that_schema_applied(
    served: bool, stored: list[str], expected: set[Any]
) -> None:
    """A version the old CRD neither served nor stored at validated nothing: its new schema
    is judged against what the versions that were served wrote (issue 22 §3)."""

    def field(bound: int) -> dict[str, Any]:
        return spec_schema(field={"type": "integer", "maximum": bound})

    loose = spec_schema(field={"type": "integer"})
    old = crd(
        version("v1", schema=loose),
        version("v2", schema=field(200), storage=False, served=served),
        stored=stored or None,
    )
    new = crd(version("v1", schema=loose), version("v2", schema=field(10), storage=False))
    assert {(f.code, f.version, f.path) for f in compare(old, new).findings} == expected


def selectable(*paths: str) -> Edit:
    return lambda body: body["spec"]["versions"][0].update(
        selectableFields=[{"jsonPath": path} for path in paths]
    )


SCALED = edited(BASE, scale_subresource)
SELECTABLE = edited(BASE, selectable(".spec.color"))


def scale_path(key: str, value: str) -> Edit:
    return lambda body: body["spec"]["versions"][0]["subresources"]["scale"].update({key: value})


@pytest.mark.parametrize(
    ("old", "edit", "expected"),
    [
        pytest.param(
            SELECTABLE, selectable(), {("UG111", None)}, id="selectable field removed: flagged"
        ),
        pytest.param(
            SELECTABLE,
            selectable(".spec.color", ".spec.size"),
            set(),
            id="selectable field added: not flagged",
        ),
        pytest.param(
            SCALED,
            no_status_subresource,
            {("UG109", None), ("UG112", None)},
            id="subresources removed: status and scale flagged",
        ),
        pytest.param(
            SCALED,
            scale_path("specReplicasPath", ".spec.size"),
            {("UG112", None)},
            id="scale path moved: flagged",
        ),
        pytest.param(
            SCALED,
            scale_path("labelSelectorPath", ".status.selector"),
            set(),
            id="scale labelSelectorPath added: not flagged",
        ),
        pytest.param(
            BASE,
            lambda body: body["spec"]["versions"][0].update(deprecated=True),
            set(),
            id="version deprecated: not flagged",
        ),
        pytest.param(
            BASE,
            lambda body: body["spec"]["versions"][0]["subresources"].update(extra={}),
            {("UG901", None)},
            id="unknown subresource: unclassified",
        ),
    ],
)
def test_version_field_change(old: dict[str, Any], edit: Edit, expected: set[Any]) -> None:
    assert flagged(old, edited(old, edit)) == expected
