"""The rules held to the real kube-apiserver: one row per rule claim.

Each row stores an object under an old CRD, applies the new CRD and records what the
apiserver does (CRD update, read-back, UPDATE touching another field, /status write, CREATE
of an identical object; see ``tools/testenv/truth.py``). The apiserver's verdict:

* error: the stored object is hurt: the CRD update is refused, the untouched UPDATE or
  /status write fails, or the object reads back differently (pruned, defaulted);
* warning: stored objects keep working (ratcheting) but an identical CREATE fails;
* ok: neither.

The engine, run on the same two CRDs for Kubernetes 1.35, must report the row's rule codes
(none on the allowed side of a pair) at the row's path, with the verdict's severity (info
counts as ok). Rows where the apiserver disagrees with a rule are xfail(strict=True) with the
disagreement as the reason: they are the rules' bugs, kept visible, not hidden by the test.
The rows run on the oldest minor's apiserver too (issue 38), the engine told that minor;
``ON_OLDEST`` holds the verdicts that apiserver shows otherwise.

``UG_TRUTH_TABLE=path`` writes the observed table as Markdown.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_crd_validation_truth import ModelDisagrees

from testenv import MINORS, NEWEST_MINOR, Cluster, CRDTrial
from testenv.kube import KubeError, wait_for
from testenv.truth import (
    Claim,
    Scenario,
    ScenarioRun,
    Truth,
    Verdict,
    crd_body,
    observe,
    root_schema,
    version_entry,
)
from upgrade_guard import engine
from upgrade_guard.crd import Crd
from upgrade_guard.findings import Finding, Severity

KUBE_VERSION = (1, 35)
APPLY_PATCH = "application/apply-patch+yaml"
STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}


def obj(props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": props or {}}
    node.update(extra)
    return node


def arr(items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **extra}


def with_(node: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**node, **extra}


def cel(rule: str, message: str | None = None) -> list[dict[str, str]]:
    entry = {"rule": rule}
    if message:
        entry["message"] = message
    return [entry]


def c(
    key: str,
    path: str | None,
    stored: dict[str, Any],
    codes: tuple[str, ...] | str,
    expect: tuple[str, ...] | None = None,
) -> Claim:
    """A claim; ``expect`` defaults to ``codes`` (the breaking side of a pair)."""
    codes = (codes,) if isinstance(codes, str) else codes
    return Claim(key, codes, path, codes if expect is None else expect, stored)


def allowed(key: str, path: str | None, stored: dict[str, Any], codes: str) -> Claim:
    return c(key, path, stored, codes, expect=())


# CRD-level scenarios -------------------------------------------------------------------------
def _stored_version_crds(keep: bool) -> Callable[[str], tuple[Any, Any, Any]]:
    def build(plural: str) -> tuple[Any, Any, Any]:
        schema = root_schema()
        initial = crd_body(plural, [version_entry("v1alpha1", schema)])
        both = crd_body(
            plural,
            [version_entry("v1alpha1", schema, storage=False), version_entry("v1", schema)],
        )
        if keep:
            new = crd_body(
                plural,
                [
                    version_entry("v1alpha1", schema, storage=False, served=False),
                    version_entry("v1", schema),
                ],
            )
        else:
            new = crd_body(plural, [version_entry("v1", schema)])
        return initial, both, new

    return build


def _storage_move_crds(served_before: bool) -> Callable[[str], tuple[Any, Any, Any]]:
    """Storage moves from v1alpha1 to v1; the old CRD serves v1 too, or not yet."""

    def build(plural: str) -> tuple[Any, Any, Any]:
        schema = root_schema()
        old_versions = [version_entry("v1alpha1", schema)]
        if served_before:
            old_versions.append(version_entry("v1", schema, storage=False))
        new_versions = [
            version_entry("v1alpha1", schema, storage=False),
            version_entry("v1", schema),
        ]
        return None, crd_body(plural, old_versions), crd_body(plural, new_versions)

    return build


def _names_crds(**new_names: Any) -> Callable[[str], tuple[Any, Any, Any]]:
    def build(plural: str) -> tuple[Any, Any, Any]:
        versions = [version_entry("v1", root_schema())]
        return None, crd_body(plural, versions), crd_body(plural, versions, names=new_names)

    return build


def _list_kind_omitted_crds(plural: str) -> tuple[Any, Any, Any]:
    """The live CRD (listKind as the apiserver defaults it) and a chart CRD that leaves
    listKind out, as most generated CRDs may: the apiserver defaults it to the same value."""
    versions = [version_entry("v1", root_schema())]
    new = crd_body(plural, versions)
    del new["spec"]["names"]["listKind"]
    return None, crd_body(plural, versions), new


def _status_subresource_crds(plural: str) -> tuple[Any, Any, Any]:
    old = crd_body(plural, [version_entry("v1", root_schema())])
    new = crd_body(plural, [version_entry("v1", root_schema())])
    del new["spec"]["versions"][0]["subresources"]
    return None, old, new


def _scope_crds(plural: str) -> tuple[Any, Any, Any]:
    versions = [version_entry("v1", root_schema())]
    return None, crd_body(plural, versions), crd_body(plural, versions, scope="Cluster")


def _status_required(name: str, props: dict[str, Any]) -> dict[str, Any]:
    schema = root_schema(status=props)
    schema["properties"]["status"]["required"] = [name]
    return schema


PLAIN = {"touch": "t0"}
_PRESERVE = obj(**{"x-kubernetes-preserve-unknown-fields": True})
_EMBEDDED = obj(
    **{"x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-embedded-resource": True}
)
# An embedded resource that declares its fields: metadata as a plain object.
_EMBEDDED_TYPED = obj(
    {"apiVersion": STR, "kind": STR, "metadata": obj()},
    **{"x-kubernetes-embedded-resource": True},
)
_CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap"}
_KEEPS = {"x-kubernetes-preserve-unknown-fields": True}
_LOOSE = {**_KEEPS, "nullable": True}  # any value, null included: what a kept node holds
_EMBEDDED_FLAG = {"x-kubernetes-embedded-resource": True}
_NAMED = obj({"name": with_(STR, maxLength=20)})
_TYPED_RESOURCE = {"data": STR, "apiVersion": STR, "kind": STR, "metadata": obj()}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "ug201",
        old=root_schema(
            {
                "legacy": STR,
                "bag": obj({"kept": STR}, **{"x-kubernetes-preserve-unknown-fields": True}),
                "labels": obj({"a": STR}),
            }
        ),
        new=root_schema(
            {
                "bag": obj(**{"x-kubernetes-preserve-unknown-fields": True}),
                "labels": {"type": "object", "additionalProperties": STR},
            }
        ),
        claims=(
            c("ug201-property-removed", "spec.legacy", {"legacy": "precious"}, "UG201"),
            allowed(
                "ug201-removed-under-preserve-unknown-fields",
                "spec.bag.kept",
                {"bag": {"kept": "v"}},
                "UG201",
            ),
            allowed(
                "ug201-removed-into-additional-properties",
                "spec.labels.a",
                {"labels": {"a": "x"}},
                "UG201",
            ),
        ),
    ),
    Scenario(
        "ug202",
        old=root_schema(
            {
                "limits": obj({"max": INT, "other": INT}),
                "more": obj({"size": INT}),
                "opts": obj({"mode": STR, "size": INT}),
                "extra": obj({"size": INT}),
            }
        ),
        new=root_schema(
            {
                "limits": obj({"max": INT, "other": INT}, required=["max"]),
                "more": obj({"size": INT, "name": STR}, required=["name"]),
                "opts": obj({"mode": with_(STR, default="fast"), "size": INT}, required=["mode"]),
                "extra": obj({"size": INT, "level": with_(STR, default="low")}, required=["level"]),
            }
        ),
        claims=(
            c("ug202-required-added", "spec.limits.max", {"limits": {"other": 1}}, "UG202"),
            c("ug202-required-new-field", "spec.more.name", {"more": {"size": 1}}, "UG202"),
            c(
                "ug203-required-existing-field-with-default",
                "spec.opts.mode",
                {"opts": {"size": 1}},
                ("UG203", "UG212"),
            ),
            c(
                "ug203-required-new-field-with-default",
                "spec.extra.level",
                {"extra": {"size": 1}},
                ("UG203", "UG212"),
                expect=("UG203",),
            ),
        ),
    ),
    Scenario(
        # required on the object that holds the updated field: re-validated on every UPDATE.
        "ug202p",
        old=root_schema({"owner": STR}),
        new=root_schema({"owner": STR}, required=["owner"]),
        claims=(c("ug202-required-added-on-updated-object", "spec.owner", {}, "UG202"),),
    ),
    Scenario(
        # required inside status: re-validated on every /status write.
        "ug202st",
        old=root_schema(status={"phase": STR}),
        new=_status_required("phase", {"phase": STR}),
        claims=(c("ug202-required-added-in-status", "status.phase", {}, "UG202"),),
    ),
    Scenario(
        "ug204",
        old=root_schema({"size": STR, "count": INT}),
        new=root_schema({"size": INT, "count": {"type": "number"}}),
        claims=(
            c("ug204-string-to-integer", "spec.size", {"size": "8"}, "UG204"),
            allowed("ug204-integer-to-number", "spec.count", {"count": 3}, "UG204"),
        ),
    ),
    Scenario(
        "ug205",
        old=root_schema(
            {
                "opt": with_(STR, nullable=True),
                "optd": with_(STR, nullable=True, default="d"),
                "gain": STR,
            }
        ),
        new=root_schema(
            {"opt": STR, "optd": with_(STR, default="d"), "gain": with_(STR, nullable=True)}
        ),
        claims=(
            c("ug205-nullable-removed", "spec.opt", {"opt": None}, "UG205"),
            c("ug205-nullable-removed-with-default", "spec.optd", {"optd": None}, "UG205"),
            allowed("ug205-nullable-added", "spec.gain", {"gain": "x"}, "UG205"),
        ),
    ),
    Scenario(
        "ug206",
        old=root_schema(
            {
                "port": {"x-kubernetes-int-or-string": True},
                "port2": {"x-kubernetes-int-or-string": True},
                "port3": INT,
                "port4": STR,
            }
        ),
        new=root_schema(
            {
                "port": INT,
                "port2": STR,
                "port3": {"x-kubernetes-int-or-string": True},
                "port4": {"x-kubernetes-int-or-string": True, "anyOf": [INT, STR]},
            }
        ),
        claims=(
            c(
                "ug206-int-or-string-to-integer",
                "spec.port",
                {"port": "http"},
                ("UG206", "UG204"),
                expect=("UG206",),
            ),
            c(
                "ug206-int-or-string-to-string",
                "spec.port2",
                {"port2": 80},
                ("UG206", "UG204"),
                expect=("UG206",),
            ),
            c(
                "ug206-int-or-string-added",
                "spec.port3",
                {"port3": 8080},
                ("UG206", "UG204"),
                expect=(),
            ),
            c(
                # the anyOf controller-gen writes beside the extension restates it
                "ug206-int-or-string-added-with-its-any-of",
                "spec.port4",
                {"port4": "http"},
                ("UG206", "UG204", "UG218"),
                expect=(),
            ),
        ),
    ),
    Scenario(
        "ug207",
        old=root_schema(
            {
                "color": with_(STR, enum=["red", "green", "blue"]),
                "shade": with_(STR, enum=["a"]),
                "tier": STR,
            }
        ),
        new=root_schema(
            {
                "color": with_(STR, enum=["red", "green"]),
                "shade": with_(STR, enum=["a", "b"]),
                "tier": with_(STR, enum=["gold"]),
            }
        ),
        claims=(
            c("ug207-enum-value-removed", "spec.color", {"color": "blue"}, "UG207"),
            c("ug207-enum-introduced", "spec.tier", {"tier": "silver"}, "UG207"),
            allowed("ug207-enum-value-added", "spec.shade", {"shade": "a"}, "UG207"),
        ),
    ),
    Scenario(
        "ug208",
        old=root_schema(
            {
                "replicas": with_(INT, maximum=10),
                "wide": with_(INT, maximum=10),
                "name": with_(STR, minLength=1),
                "code": with_(STR, maxLength=10),
                "items": arr(STR, maxItems=5),
                "few": arr(STR, maxItems=2),
                "floor": with_(INT, minimum=0),
                "labels": {"type": "object", "additionalProperties": STR, "maxProperties": 3},
            }
        ),
        new=root_schema(
            {
                "replicas": with_(INT, maximum=5),
                "wide": with_(INT, maximum=20),
                "name": with_(STR, minLength=5),
                "code": with_(STR, maxLength=3),
                "items": arr(STR, maxItems=2),
                "few": arr(STR, maxItems=5),
                "floor": with_(INT, minimum=0, exclusiveMinimum=True),
                "labels": {"type": "object", "additionalProperties": STR, "maxProperties": 1},
            }
        ),
        claims=(
            c("ug208-maximum-tightened", "spec.replicas", {"replicas": 8}, "UG208"),
            allowed("ug208-maximum-loosened", "spec.wide", {"wide": 8}, "UG208"),
            c("ug208-minlength-tightened", "spec.name", {"name": "abc"}, "UG208"),
            c("ug208-maxlength-tightened", "spec.code", {"code": "abcdef"}, "UG208"),
            c("ug208-maxitems-tightened", "spec.items", {"items": ["a", "b", "c"]}, "UG208"),
            allowed("ug208-maxitems-loosened", "spec.few", {"few": ["a", "b"]}, "UG208"),
            c("ug208-exclusive-minimum-added", "spec.floor", {"floor": 0}, "UG208"),
            c(
                "ug208-maxproperties-tightened",
                "spec.labels",
                {"labels": {"a": "x", "b": "y"}},
                "UG208",
            ),
        ),
    ),
    Scenario(
        "ug209",
        old=root_schema({"step": INT, "even": with_(INT, multipleOf=4)}),
        new=root_schema({"step": with_(INT, multipleOf=5), "even": with_(INT, multipleOf=2)}),
        claims=(
            c("ug209-multipleof-added", "spec.step", {"step": 7}, "UG209"),
            allowed("ug209-multipleof-to-divisor", "spec.even", {"even": 8}, "UG209"),
        ),
    ),
    Scenario(
        "ug210",
        old=root_schema(
            {
                "uid": STR,
                "ts": STR,
                "day": STR,
                "span": STR,
                "blob": STR,
                "ip": STR,
                "net": STR,
                "host": STR,
                "mail": STR,
                "link": STR,
                "small": INT,
                "odd": STR,
                "secret": STR,
                "short": STR,
                "gone": with_(STR, format="uuid"),
            }
        ),
        new=root_schema(
            {
                "uid": with_(STR, format="uuid"),
                "ts": with_(STR, format="date-time"),
                "day": with_(STR, format="date"),
                "span": with_(STR, format="duration"),
                "blob": with_(STR, format="byte"),
                "ip": with_(STR, format="ipv4"),
                "net": with_(STR, format="cidr"),
                "host": with_(STR, format="hostname"),
                "mail": with_(STR, format="email"),
                "link": with_(STR, format="uri"),
                "small": with_(INT, format="int32"),
                "odd": with_(STR, format="no-such-format"),
                "secret": with_(STR, format="password"),
                "short": with_(STR, format="k8s-short-name"),
                "gone": STR,
            }
        ),
        claims=(
            c("ug210-format-uuid", "spec.uid", {"uid": "not-a-uuid"}, "UG210"),
            c("ug210-format-date-time", "spec.ts", {"ts": "yesterday"}, "UG210"),
            c("ug210-format-date", "spec.day", {"day": "2024-02-31x"}, "UG210"),
            c("ug210-format-duration", "spec.span", {"span": "forever"}, "UG210"),
            c("ug210-format-byte", "spec.blob", {"blob": "!!not base64!!"}, "UG210"),
            c("ug210-format-ipv4", "spec.ip", {"ip": "999.1.1.1"}, "UG210"),
            c("ug210-format-cidr", "spec.net", {"net": "10.0.0.0/99"}, "UG210"),
            c("ug210-format-hostname", "spec.host", {"host": "-bad_host-"}, "UG210"),
            c("ug210-format-email", "spec.mail", {"mail": "no-at-sign"}, "UG210"),
            c("ug210-format-uri", "spec.link", {"link": "not a uri"}, "UG210"),
            allowed("ug210-format-int32", "spec.small", {"small": 1099511627776}, "UG210"),
            allowed("ug210-format-unknown", "spec.odd", {"odd": "anything"}, "UG210"),
            allowed("ug210-format-password", "spec.secret", {"secret": "anything"}, "UG210"),
            c("ug210-format-k8s-short-name", "spec.short", {"short": "Not_A_Name"}, "UG210"),
            allowed(
                "ug210-format-removed",
                "spec.gone",
                {"gone": "0f8fad5b-d9cb-469f-a165-70867728950e"},
                "UG210",
            ),
        ),
    ),
    Scenario(
        "ug211",
        old=root_schema(
            {
                "slug": STR,
                "loose": with_(STR, pattern="^[a-z]+$"),
                "proxy": with_(STR, pattern="^(http|https)://.+$"),
                "hook": with_(STR, pattern="^(http|https|socks5)://.+$"),
            }
        ),
        new=root_schema(
            {
                "slug": with_(STR, pattern="^[a-z]+$"),
                "loose": STR,
                "proxy": with_(STR, pattern="^(http|https|socks5)://.+$"),
                "hook": with_(STR, pattern="^(http|https)://.+$"),
            }
        ),
        claims=(
            c("ug211-pattern-added", "spec.slug", {"slug": "ABC"}, "UG211"),
            allowed("ug211-pattern-removed", "spec.loose", {"loose": "abc"}, "UG211"),
            c("ug211-pattern-narrowed", "spec.hook", {"hook": "socks5://proxy:1080"}, "UG211"),
            allowed(
                "ug211-pattern-widened", "spec.proxy", {"proxy": "https://proxy:3128"}, "UG211"
            ),
        ),
    ),
    Scenario(
        "ug212",
        old=root_schema(
            {
                "a": obj({"mode": STR}),
                "b": obj({"lvl": with_(STR, default="a")}),
                "c": obj({"gone": with_(STR, default="a")}),
                "d": obj({"size": INT}),
            }
        ),
        new=root_schema(
            {
                "a": obj({"mode": with_(STR, default="fast")}),
                "b": obj({"lvl": with_(STR, default="b")}),
                "c": obj({"gone": STR}),
                "d": obj({"size": INT, "fresh": with_(STR, default="x")}),
            }
        ),
        claims=(
            c("ug212-default-added", "spec.a.mode", {"a": {}}, "UG212"),
            c("ug212-default-changed-persisted", "spec.b.lvl", {"b": {}}, "UG219"),
            c("ug212-default-removed-persisted", "spec.c.gone", {"c": {}}, "UG219"),
            allowed("ug212-default-on-new-field", "spec.d.fresh", {"d": {"size": 1}}, "UG212"),
        ),
    ),
    Scenario(
        # Objects stored before any default: the old CRD's default is applied on read only.
        "ug212h",
        initial=root_schema({"e": obj({"lvl": STR}), "f": obj({"gone": STR})}),
        old=root_schema(
            {
                "e": obj({"lvl": with_(STR, default="a")}),
                "f": obj({"gone": with_(STR, default="a")}),
            }
        ),
        new=root_schema({"e": obj({"lvl": with_(STR, default="b")}), "f": obj({"gone": STR})}),
        claims=(
            c("ug212-default-changed-read-only", "spec.e.lvl", {"e": {}}, "UG219"),
            c("ug212-default-removed-read-only", "spec.f.gone", {"f": {}}, "UG219"),
        ),
    ),
    Scenario(
        "ug213",
        old=root_schema(
            {
                "replicas": INT,
                "level": INT,
                "msg": with_(STR, **{"x-kubernetes-validations": cel("self.size() < 10", "a")}),
                "cap": INT,
            }
        ),
        new=root_schema(
            {
                "replicas": with_(INT, **{"x-kubernetes-validations": cel("self <= 5")}),
                "level": with_(
                    INT, **{"x-kubernetes-validations": cel("self <= 5 && self >= oldSelf")}
                ),
                "msg": with_(STR, **{"x-kubernetes-validations": cel("self.size() < 10", "b")}),
                "cap": INT,
            },
            **{"x-kubernetes-validations": cel("!has(self.cap) || self.cap <= 5")},
        ),
        claims=(
            c("ug213-rule-added-on-the-field", "spec.replicas", {"replicas": 8}, "UG213"),
            c("ug213-transition-rule-added", "spec.level", {"level": 8}, "UG213"),
            allowed("ug213-message-only-changed", "spec.msg", {"msg": "abc"}, "UG213"),
            c("ug213-rule-added-on-parent-of-updated-field", "spec", {"cap": 8}, "UG213"),
        ),
    ),
    Scenario(
        # /status writes: CEL rules see the whole object; ratcheting is by unchanged value.
        "status",
        old=root_schema({"cap": INT, "lvl": INT}),
        new={
            **root_schema(
                {"cap": INT, "lvl": INT},
                **{
                    "x-kubernetes-validations": cel(
                        "!has(self.lvl) || self.lvl <= 5 ||"
                        " (has(oldSelf.lvl) && self.lvl < oldSelf.lvl)"
                    )
                },
            ),
            "x-kubernetes-validations": cel("!has(self.spec.cap) || self.spec.cap <= 5"),
        },
        claims=(
            c("status-root-rule-on-a-spec-field", ".", {"cap": 8}, "UG213"),
            c("status-spec-transition-rule", "spec", {"lvl": 8}, "UG213"),
        ),
    ),
    Scenario(
        "ug214",
        old=root_schema(
            {
                "tags": arr(STR),
                "ports": arr(obj({"name": STR, "port": INT}, required=["name"])),
                "eps": arr(
                    obj({"name": STR, "port": INT}, required=["name", "port"]),
                    **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                ),
            }
        ),
        new=root_schema(
            {
                "tags": arr(STR, **{"x-kubernetes-list-type": "set"}),
                "ports": arr(
                    obj({"name": STR, "port": INT}, required=["name"]),
                    **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                ),
                "eps": arr(
                    obj({"name": STR, "port": INT}, required=["name", "port"]),
                    **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"]},
                ),
            }
        ),
        claims=(
            c("ug214-atomic-to-set-duplicates", "spec.tags", {"tags": ["a", "a"]}, "UG214"),
            c(
                "ug214-atomic-to-map-duplicate-keys",
                "spec.ports",
                {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]},
                "UG214",
            ),
            c(
                "ug214-map-keys-changed-duplicates",
                "spec.eps",
                {"eps": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]},
                "UG214",
            ),
        ),
    ),
    Scenario(
        "ug216",
        old=root_schema(
            {
                "bag": obj({"known": STR}, **{"x-kubernetes-preserve-unknown-fields": True}),
                "bag2": obj({"known": STR}),
            }
        ),
        new=root_schema(
            {
                "bag": obj({"known": STR}),
                "bag2": obj({"known": STR}, **{"x-kubernetes-preserve-unknown-fields": True}),
            }
        ),
        claims=(
            c(
                "ug216-preserve-unknown-fields-removed",
                "spec.bag",
                {"bag": {"known": "a", "extra": "b"}},
                "UG216",
            ),
            allowed(
                "ug216-preserve-unknown-fields-added",
                "spec.bag2",
                {"bag2": {"known": "a"}},
                "UG216",
            ),
        ),
    ),
    Scenario(
        "ug217",
        old=root_schema(
            {"tmpl": _PRESERVE, "tmpl2": _PRESERVE, "tmpl3": _EMBEDDED, "tmpl4": _EMBEDDED_TYPED}
        ),
        new=root_schema(
            {
                "tmpl": _EMBEDDED,
                "tmpl2": _EMBEDDED,
                "tmpl3": _PRESERVE,
                "tmpl4": obj(_EMBEDDED_TYPED["properties"]),
            }
        ),
        claims=(
            c("ug217-embedded-on-without-kind", "spec.tmpl", {"tmpl": {"foo": "bar"}}, "UG217"),
            c(
                "ug217-embedded-on-unknown-metadata",
                "spec.tmpl2",
                {"tmpl2": {**_CONFIGMAP, "metadata": {"name": "x", "bogus": "y"}}},
                "UG217",
            ),
            allowed(
                "ug217-embedded-off-preserving",
                "spec.tmpl3",
                {"tmpl3": {**_CONFIGMAP, "metadata": {"name": "x", "labels": {"a": "b"}}}},
                "UG217",
            ),
            c(
                "ug217-embedded-off-declared-metadata",
                "spec.tmpl4",
                {"tmpl4": {**_CONFIGMAP, "metadata": {"name": "x", "labels": {"a": "b"}}}},
                "UG217",
            ),
        ),
    ),
    Scenario(
        "ug218",
        old=root_schema(
            {
                "size": INT,
                "word": STR,
                "pair": obj({"a": INT, "b": INT}),
                "either": obj({"a": INT, "b": INT, "c": INT}),
                "some": with_(INT, allOf=[{"maximum": 5}]),
            }
        ),
        new=root_schema(
            {
                "size": with_(INT, allOf=[{"maximum": 5}]),
                "word": with_(STR, **{"not": {"enum": ["bad"]}}),
                "pair": obj({"a": INT, "b": INT}, oneOf=[{"required": ["a"]}, {"required": ["b"]}]),
                "either": obj(
                    {"a": INT, "b": INT, "c": INT}, anyOf=[{"required": ["a"]}, {"required": ["b"]}]
                ),
                "some": INT,
            }
        ),
        claims=(
            c("ug218-allof-added", "spec.size", {"size": 8}, "UG218"),
            c("ug218-not-added", "spec.word", {"word": "bad"}, "UG218"),
            c("ug218-oneof-added", "spec.pair", {"pair": {"a": 1, "b": 1}}, "UG218"),
            c("ug218-anyof-added", "spec.either", {"either": {"c": 1}}, "UG218"),
            allowed("ug218-allof-removed", "spec.some", {"some": 3}, "UG218"),
        ),
    ),
    Scenario(
        # A combinator on the object that holds the updated field.
        "ug218p",
        old=root_schema({"a": INT, "b": INT}),
        new=root_schema({"a": INT, "b": INT}, anyOf=[{"required": ["a"]}, {"required": ["b"]}]),
        claims=(c("ug218-anyof-added-on-updated-object", "spec", {}, "UG218"),),
    ),
    # Fields declared where the old schema kept unknown fields (issue 22 §1): stored objects
    # can hold any value there, null included, so each declaration tightens "any value".
    Scenario(
        "kept",
        old=root_schema(**_KEEPS),
        new=root_schema(
            {
                "obj": obj({"a": STR}),
                "open": obj({"a": STR}, **_LOOSE),
                "shape": {**_LOOSE, "properties": {"a": _LOOSE}},
                "num": with_(INT, nullable=True),
                "port": {"x-kubernetes-int-or-string": True, "nullable": True},
                "bare": dict(_KEEPS),
                "free": dict(_LOOSE),
                "color": with_(_LOOSE, enum=["red"]),
                "size": with_(_LOOSE, maximum=5),
                "slug": with_(_LOOSE, pattern="^[a-z]+$"),
                "uid": with_(_LOOSE, format="uuid"),
                "req": {**_LOOSE, "properties": {"a": _LOOSE}, "required": ["a"]},
                "list": arr(obj({"a": STR}), nullable=True),
            },
            **_KEEPS,
        ),
        claims=(
            c(
                "kept-object-declared-prunes-its-other-fields",
                "spec.obj",
                {"obj": {"a": "x", "b": "y"}},
                ("UG216", "UG204", "UG205"),
                expect=("UG216", "UG204", "UG205"),
            ),
            c(
                "kept-object-declared-keeping-unknown-fields-is-typed",
                "spec.open",
                {"open": "text"},
                ("UG216", "UG204", "UG205"),
                expect=("UG204",),
            ),
            allowed(
                "kept-object-declared-untyped-keeping-unknown-fields-and-nulls",
                "spec.shape",
                {"shape": {"a": {"deep": 1}, "b": "y"}},
                "UG216",
            ),
            c("kept-type-declared", "spec.num", {"num": "eight"}, "UG204"),
            c("kept-int-or-string-declared", "spec.port", {"port": True}, "UG204"),
            c("kept-null-dropped", "spec.bare", {"bare": None}, "UG205"),
            allowed("kept-any-value-declared", "spec.free", {"free": None}, "UG205"),
            c("kept-enum-declared", "spec.color", {"color": "blue"}, "UG207"),
            c("kept-bound-declared", "spec.size", {"size": 8}, "UG208"),
            c("kept-pattern-declared", "spec.slug", {"slug": "ABC"}, "UG211"),
            c("kept-format-declared", "spec.uid", {"uid": "not-a-uuid"}, "UG210"),
            c("kept-required-declared", "spec.req.a", {"req": {"b": 1}}, "UG202"),
            c(
                "kept-array-declared-prunes-item-fields",
                "spec.list",
                {"list": [{"a": "x", "b": "y"}]},
                ("UG216", "UG204"),
            ),
        ),
    ),
    Scenario(
        # CEL rules and list types need a type: the type declared is judged in "kept".
        "keptt",
        old=root_schema(**_KEEPS),
        new=root_schema(
            {
                "cap": with_(INT, nullable=True, **{"x-kubernetes-validations": cel("self <= 5")}),
                "lvl": with_(
                    INT,
                    nullable=True,
                    **{"x-kubernetes-validations": cel("self <= 5 && self >= oldSelf")},
                ),
                "tags": arr(STR, nullable=True, **{"x-kubernetes-list-type": "set"}),
            },
            **_KEEPS,
        ),
        claims=(
            c("kept-rule-declared", "spec.cap", {"cap": 8}, "UG213"),
            c("kept-transition-rule-declared", "spec.lvl", {"lvl": 8}, "UG213"),
            c("kept-set-list-declared", "spec.tags", {"tags": ["a", "a"]}, "UG214"),
        ),
        tolerate=("UG204", "UG216"),
    ),
    Scenario(
        # A default where fields were kept is read back by every object without the field;
        # beside it, one where they were pruned (nothing stored has it).
        "keptd",
        old=root_schema({"strict": obj({"a": STR})}, **_KEEPS),
        new=root_schema(
            {
                "mode": with_(_LOOSE, default="fast"),
                "strict": obj({"a": STR, "mode": with_(STR, default="fast")}),
            },
            **_KEEPS,
        ),
        claims=(
            c("kept-default-declared", "spec.mode", {"other": 1}, "UG212"),
            allowed(
                "kept-default-declared-where-pruned",
                "spec.strict.mode",
                {"mode": "slow", "strict": {"a": "x"}},
                "UG212",
            ),
        ),
    ),
    Scenario(
        # The whole root kept unknown fields: spec declared prunes; apiVersion, kind and
        # metadata declared are what every object holds anyway.
        "keptroot",
        old={"type": "object", **_KEEPS},
        new={
            "type": "object",
            **_KEEPS,
            "properties": {
                "apiVersion": STR,
                "kind": STR,
                "metadata": {"type": "object"},
                "spec": obj({"touch": STR, "a": STR}),
                "status": dict(_LOOSE),
            },
        },
        claims=(
            c(
                "kept-root-spec-declared",
                "spec",
                {"a": "x", "b": 2},
                ("UG216", "UG204", "UG205"),
            ),
        ),
    ),
    Scenario(
        # The root's metadata holds ObjectMeta's fields whether declared or not: a constraint
        # declared on metadata.name applies to every stored name (each object's name is its
        # claim key, 26 characters and more).
        "rootmeta",
        old=root_schema(),
        new={**root_schema(), "properties": {**root_schema()["properties"], "metadata": _NAMED}},
        claims=(c("root-metadata-name-declared-with-max-length", "metadata.name", PLAIN, "UG208"),),
    ),
    Scenario(
        "rootmetas",
        old=root_schema(),
        new={
            **root_schema(),
            "properties": {**root_schema()["properties"], "metadata": obj({"name": STR})},
        },
        claims=(allowed("root-metadata-name-declared-as-string", "metadata.name", PLAIN, "UG208"),),
    ),
    Scenario(
        "rootmetad",
        old={
            **root_schema(),
            "properties": {**root_schema()["properties"], "metadata": obj({"name": STR})},
        },
        new=root_schema(),
        claims=(allowed("root-metadata-declaration-dropped", "metadata", PLAIN, "UG201"),),
    ),
    Scenario(
        # Ratcheting pairs old and new values field by field through the schema: a field no
        # schema declares never pairs, so an object holding one is never unchanged and a
        # constraint on it is not ratcheted (k8s.io/apiserver pkg/cel/common/equality.go).
        "keptr",
        old=root_schema(
            {
                "box": obj({"x": INT}, **_KEEPS),
                "plain": obj({"x": INT}),
                "tmpl": obj({"data": STR}, **_EMBEDDED_FLAG),
                "typed": obj(_TYPED_RESOURCE, **_EMBEDDED_FLAG),
            }
        ),
        new=root_schema(
            {
                "box": obj({"x": INT}, minProperties=3, **_KEEPS),
                "plain": obj({"x": INT}, minProperties=3),
                "tmpl": obj({"data": STR}, minProperties=4, **_EMBEDDED_FLAG),
                "typed": obj(_TYPED_RESOURCE, minProperties=4, **_EMBEDDED_FLAG),
            }
        ),
        claims=(
            c("ratcheting-object-holding-an-unknown-field", "spec.box", {"box": {"y": 1}}, "UG208"),
            c(
                "ratcheting-object-that-may-hold-unknown-fields",
                "spec.box",
                {"box": {"x": 1}},
                "UG208",
            ),
            c(
                "ratcheting-object-without-unknown-fields",
                "spec.plain",
                {"plain": {"x": 1}},
                "UG208",
            ),
            c(
                "ratcheting-embedded-resource-undeclared-kind",
                "spec.tmpl",
                {"tmpl": {**_CONFIGMAP, "data": "d"}},
                "UG208",
            ),
            c(
                "ratcheting-embedded-resource-declared-kind",
                "spec.typed",
                {"typed": {**_CONFIGMAP, "data": "d"}},
                "UG208",
            ),
            c(
                "ratcheting-embedded-resource-holding-metadata",
                "spec.typed",
                {"typed": {**_CONFIGMAP, "metadata": {"name": "n"}}},
                "UG208",
            ),
        ),
    ),
    Scenario(
        # additionalProperties held a map's values: a property declared instead keeps only its
        # own key, under its own schema.
        "addl",
        old=root_schema(
            {
                "labels": {"type": "object", "additionalProperties": STR},
                "bag": {"type": "object", "additionalProperties": True},
                "named": obj({"a": STR}),
            }
        ),
        new=root_schema(
            {
                "named": {"type": "object", "additionalProperties": with_(STR, pattern="^[a-z]+$")},
                "labels": obj({"a": with_(STR, pattern="^[a-z]+$"), "b": STR}),
                "bag": obj({"k": obj({"x": INT})}),
            }
        ),
        claims=(
            c(
                "additional-properties-declared-prunes-other-keys",
                "spec.labels.*",
                {"labels": {"c": "x"}},
                "UG201",
            ),
            c(
                "additional-properties-declared-with-pattern",
                "spec.labels.a",
                {"labels": {"a": "ABC"}},
                "UG211",
            ),
            allowed(
                "additional-properties-declared-as-they-were",
                "spec.labels.b",
                {"labels": {"b": "ABC"}},
                "UG211",
            ),
            c(
                "additional-properties-true-declared-typed",
                "spec.bag.k",
                {"bag": {"k": 5}},
                "UG204",
            ),
            c(
                "property-now-held-by-additional-properties",
                "spec.named.a",
                {"named": {"a": "ABC"}},
                "UG211",
            ),
        ),
        tolerate=("UG201",),  # spec.bag.*: the same pruning as spec.labels.*
    ),
    Scenario(
        # An embedded resource holds apiVersion, kind and metadata whether declared or not.
        "keptemb",
        old=root_schema({"tmpl": obj({"data": STR}, **{"x-kubernetes-embedded-resource": True})}),
        new=root_schema(
            {
                "tmpl": obj(
                    {
                        "data": STR,
                        "apiVersion": STR,
                        "kind": with_(STR, enum=["ConfigMap"]),
                        "metadata": obj({"name": with_(STR, maxLength=3)}),
                    },
                    **{"x-kubernetes-embedded-resource": True},
                )
            }
        ),
        claims=(
            c(
                "embedded-kind-declared-with-enum",
                "spec.tmpl.kind",
                {"tmpl": {"apiVersion": "v1", "kind": "Secret"}},
                "UG207",
            ),
            c(
                "embedded-metadata-name-declared-with-max-length",
                "spec.tmpl.metadata.name",
                {"tmpl": {**_CONFIGMAP, "metadata": {"name": "long-name", "labels": {"a": "b"}}}},
                "UG208",
            ),
            allowed(
                "embedded-api-version-declared-as-string",
                "spec.tmpl.apiVersion",
                {"tmpl": _CONFIGMAP},
                "UG204",
            ),
        ),
    ),
    Scenario(
        "ug104",
        old=None,
        new=None,
        crds=_stored_version_crds(keep=False),
        claims=(c("ug104-stored-version-removed", None, PLAIN, "UG104"),),
        tolerate=("UG105",),
    ),
    Scenario(
        "ug104k",
        old=None,
        new=None,
        crds=_stored_version_crds(keep=True),
        claims=(allowed("ug104-stored-version-kept-unserved", None, PLAIN, "UG104"),),
        tolerate=("UG105",),
    ),
    Scenario(
        "ug106",
        old=None,
        new=None,
        crds=_storage_move_crds(served_before=True),
        claims=(allowed("ug106-storage-moved-to-version-served-before", None, PLAIN, "UG106"),),
    ),
    Scenario(
        "ug106n",
        old=None,
        new=None,
        crds=_storage_move_crds(served_before=False),
        claims=(c("ug106-storage-moved-to-version-first-served", None, PLAIN, "UG106"),),
    ),
    Scenario(
        "ug102",
        old=None,
        new=None,
        crds=_names_crds(kind="Renamed", listKind="RenamedList"),
        claims=(c("ug102-kind-changed", None, PLAIN, "UG102"),),
    ),
    Scenario(
        "ug102l",
        old=None,
        new=None,
        crds=_names_crds(listKind="OtherList"),
        claims=(allowed("ug102-list-kind-changed", None, PLAIN, "UG102"),),
    ),
    Scenario(
        "ug102d",
        old=None,
        new=None,
        crds=_list_kind_omitted_crds,
        claims=(allowed("ug102-list-kind-omitted-defaults-to-live", None, PLAIN, "UG102"),),
    ),
    Scenario(
        "ug109",
        old=None,
        new=None,
        crds=_status_subresource_crds,
        claims=(c("ug109-status-subresource-removed", None, PLAIN, "UG109"),),
    ),
    Scenario(
        "ug102s",
        old=None,
        new=None,
        crds=_names_crds(singular="thing", categories=["things"]),
        claims=(allowed("ug102-singular-and-categories-changed", None, PLAIN, "UG102"),),
    ),
    Scenario(
        "ug103",
        old=None,
        new=None,
        crds=_scope_crds,
        claims=(c("ug103-scope-changed", None, PLAIN, "UG103"),),
    ),
)

# Source lines cited are in k8s.io/apiextensions-apiserver v0.35.4.
_TYPE = (
    "{code} stays an error on purpose: the apiserver ratchets the type check of an unchanged"
    " value (pkg/apiserver/validation/ratcheting.go), so UPDATE of another field and the"
    " /status write succeed and only CREATE fails (warning for this object), but a controller"
    " decoding the field as the new type fails on every object stored with the old one."
)
_DEFAULT_PERSISTED = (
    "UG219 is an error by the seed policies' judgement (REFERENCE §1, defaults as a contract):"
    " this object had the old default written at CREATE and reads back unchanged, but objects"
    " stored before any default read the new default or lose the old one (the read-only rows),"
    " and every new object omitting the field gets another value."
)
_ROLLBACK = (
    "UG106 judges the release after this one: the update itself hurts nothing stored, but"
    " a rollback re-applying the old CRD (v1 not in it) is refused: applying the new CRD put"
    " v1 in status.storedVersions, whether or not anything is written (test_storage_move_rollback)."
)
# Rows where the apiserver disagrees with a rule: claim key -> what it does instead. The
# disagreements found on v1.35.4 (ratcheting per node for required, combinators, list types
# and CEL rules; formats the apiserver strips; listKind; embedded-resource off; defaults
# written at CREATE) are fixed in the rules; keep this for the next one.
DISAGREEMENTS: dict[str, str] = {}

# Rows where the engine judges differently from what one stored object shows, on purpose:
# claim -> (what the apiserver shows for the row's object, what the engine says, why).
JUDGEMENTS: dict[str, tuple[Verdict, Verdict, str]] = {
    **{
        key: (Verdict.WARNING, Verdict.ERROR, _TYPE.format(code=key[:5].upper()))
        for key in (
            "ug204-string-to-integer",
            "ug206-int-or-string-to-integer",
            "ug206-int-or-string-to-string",
        )
    },
    **{
        key: (Verdict.WARNING, Verdict.ERROR, _TYPE.format(code="UG204"))
        for key in (
            "kept-object-declared-keeping-unknown-fields-is-typed",
            "kept-type-declared",
            "kept-int-or-string-declared",
            "additional-properties-true-declared-typed",
        )
    },
    "ratcheting-object-that-may-hold-unknown-fields": (
        Verdict.WARNING,
        Verdict.ERROR,
        "spec.box keeps unknown fields: an object holding one is never ratcheted (the row"
        " beside), and which stored objects do is the hook's evidence to count.",
    ),
    "ratcheting-embedded-resource-declared-kind": (
        Verdict.WARNING,
        Verdict.ERROR,
        "this object holds no metadata; one holding metadata.name, which the schema does not"
        " declare, is never ratcheted (the row beside).",
    ),
    "ug106-storage-moved-to-version-first-served": (Verdict.OK, Verdict.ERROR, _ROLLBACK),
    "ug212-default-changed-persisted": (Verdict.OK, Verdict.ERROR, _DEFAULT_PERSISTED),
    "ug212-default-removed-persisted": (Verdict.OK, Verdict.ERROR, _DEFAULT_PERSISTED),
}

CLAIMS = [(s, claim) for s in SCENARIOS for claim in s.claims]


@dataclass(frozen=True)
class DocClaim:
    """A sentence of a rule's docstring (or of REFERENCE.md) checked against one row."""

    key: str
    source: str
    sentence: str
    claim: str
    holds: Callable[[Truth], bool]
    false_because: str | None = None


def _refused_with(*fragments: str) -> Callable[[Truth], bool]:
    def check(t: Truth) -> bool:
        return not t.crd_update.allowed and all(f in t.crd_update.message for f in fragments)

    return check


def _spec(attempt: Any) -> dict[str, Any]:
    return dict((attempt.object or {}).get("spec") or {}) if attempt is not None else {}


MESSAGE_1_33 = (
    'status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions;'
    " v1alpha1 was previously a storage version, and must remain in spec.versions until a"
    " storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1"
    " from status.storedVersions"
)
DOC_CLAIMS: tuple[DocClaim, ...] = (
    DocClaim(
        "ug104-docstring-message",
        "UG104 docstring",
        'from 1.33: "status.storedVersions[0]: Invalid value: "v1alpha1": missing from'
        " spec.versions; v1alpha1 was previously a storage version, and must remain in"
        ' spec.versions until a storage migration ..."',
        "ug104-stored-version-removed",
        _refused_with(MESSAGE_1_33),
    ),
    DocClaim(
        "ug104-message-from-1.33",
        "REFERENCE.md §1 storedVersions",
        "from 1.33: ... missing from spec.versions; v1alpha1 was previously a storage version",
        "ug104-stored-version-removed",
        _refused_with(MESSAGE_1_33),
    ),
    DocClaim(
        "ug102-kind-immutable",
        "UG102 docstring",
        "the apiserver ... refuses a kind ... change once the CRD is Established",
        "ug102-kind-changed",
        _refused_with('spec.names.kind: Invalid value: "Renamed": field is immutable'),
    ),
    DocClaim(
        "ug103-scope-immutable",
        "UG103 docstring",
        "the apiserver refuses a scope change once the CRD is Established",
        "ug103-scope-changed",
        _refused_with('spec.scope: Invalid value: "Cluster": field is immutable'),
    ),
    DocClaim(
        "ug202-status-updates",
        "UG202 docstring",
        "a field newly required in status blocks the operator's status writes",
        "ug202-required-added-in-status",
        lambda t: t.status_write is not None and not t.status_write.allowed,
    ),
    DocClaim(
        "ug202-spec-updates",
        "UG202 docstring",
        "their updates fail: ... the updates that change the object holding the required list",
        "ug202-required-added-on-updated-object",
        lambda t: t.update is not None and not t.update.allowed,
    ),
    DocClaim(
        "ug203-reads-default",
        "UG203 docstring",
        "the apiserver fills the default in ... so stored objects keep working; they read"
        " back with the default",
        "ug203-required-existing-field-with-default",
        lambda t: (
            (t.read or {}).get("opts", {}).get("mode") == "fast"
            and t.update is not None
            and t.update.allowed
        ),
    ),
    DocClaim(
        "ug201-lost-at-next-write",
        "UG201 docstring",
        "every stored value there vanishes from reads at once and is lost at the next write",
        "ug201-property-removed",
        lambda t: (
            "legacy" not in (t.read or {})
            and t.update is not None
            and t.update.allowed
            and "legacy" not in _spec(t.update)
        ),
    ),
    DocClaim(
        "ug205-null-dropped",
        "UG205 docstring",
        "the apiserver drops a null it may not keep (applying the default, if any)",
        "ug205-nullable-removed-with-default",
        lambda t: (t.read or {}).get("optd") == "d" and _spec(t.create).get("optd") == "d",
    ),
    DocClaim(
        "ug206-port-example",
        "UG206 docstring",
        'stored values ... fail validation (a port stored as "http" under a new type: integer)',
        "ug206-int-or-string-to-integer",
        lambda t: (
            t.create is not None
            and not t.create.allowed
            and "must be of type integer" in t.create.message
        ),
    ),
    DocClaim(
        "ug213-transition-rule-update-only",
        "UG213 docstring",
        "A rule that uses oldSelf is a transition rule: it runs on UPDATE only ... and is"
        " never ratcheted",
        "ug213-transition-rule-added",
        lambda t: (
            t.create is not None
            and t.create.allowed
            and t.update is not None
            and not t.update.allowed
        ),
    ),
    DocClaim(
        "status-blocked-by-spec-rule",
        "REFERENCE.md §1 Status writes",
        "CEL rules run over the whole object: a tightened spec-level CEL rule can block an"
        " operator's status writes where ratcheting is off",
        "status-spec-transition-rule",
        lambda t: (
            t.status_write is not None
            and not t.status_write.allowed
            and "failed rule" in t.status_write.message
        ),
    ),
    DocClaim(
        "ug216-lost-at-next-write",
        "UG216 docstring",
        "every stored field the schema does not declare vanishes from reads at once and is"
        " lost at the next write",
        "ug216-preserve-unknown-fields-removed",
        lambda t: (
            "extra" not in (t.read or {}).get("bag", {})
            and "extra" not in _spec(t.update).get("bag", {})
        ),
    ),
    DocClaim(
        "ug217-requires-apiversion-and-kind",
        "UG217 docstring",
        "turned on, the apiserver requires apiVersion and kind in the embedded object and"
        " prunes and validates its metadata",
        "ug217-embedded-on-without-kind",
        lambda t: (
            t.create is not None
            and "spec.tmpl.apiVersion: Required value" in t.create.message
            and "spec.tmpl.kind: Required value" in t.create.message
        ),
    ),
)
_CLAIM_SCENARIO = {claim.key: scenario.key for scenario, claim in CLAIMS}


# Claims the oldest minor's apiserver (1.32) shows otherwise: claim -> (its verdict there, the
# codes the engine of that minor must report at the claim's path).
ON_OLDEST: dict[str, tuple[Verdict, tuple[str, ...]]] = {
    # k8s-short-name is a format the apiserver checks from 1.34; 1.32 lets any string be.
    "ug210-format-k8s-short-name": (Verdict.OK, ()),
    # A /status write of an object whose unchanged spec fails a new rule: refused by 1.32
    # (1.35 ratchets it, as it does an UPDATE's).
    "ug213-rule-added-on-the-field": (Verdict.ERROR, ("UG213",)),
    "kept-rule-declared": (Verdict.ERROR, ("UG213",)),
}


def _kube_version(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def _params() -> Iterator[Any]:
    for minor in MINORS:
        for scenario, claim in CLAIMS:
            marks = []
            if claim.key in DISAGREEMENTS:
                marks.append(pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[claim.key]))
            key = claim.key
            if minor != NEWEST_MINOR:
                key = f"{claim.key} @{minor}"
            yield pytest.param(minor, scenario.key, claim.key, id=key, marks=marks)


# Running the scenarios (in parallel: CRD establishment waits dominate) ----------------------
_TABLE: dict[str, tuple[Truth, str]] = {}


Runs = dict[str, dict[str, Future[ScenarioRun]]]  # minor -> scenario -> its run


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Iterator[Runs]:
    wanted: dict[str, set[str]] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec is not None:
            keys = wanted.setdefault(callspec.params.get("minor", NEWEST_MINOR), set())
            keys.add(callspec.params.get("scenario_key", ""))
            doc = callspec.params.get("doc")
            if isinstance(doc, DocClaim):
                keys.add(_CLAIM_SCENARIO[doc.claim])
    pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="truth")
    futures: Runs = {}
    for minor, keys in wanted.items():
        fixture = "cluster" if minor == NEWEST_MINOR else "oldest_cluster"
        cluster: Cluster = request.getfixturevalue(fixture)
        namespace = f"rule-truth-{secrets.token_hex(3)}"
        cluster.admin.ensure_namespace(namespace)
        futures[minor] = {
            s.key: pool.submit(observe, cluster.admin, s, namespace)
            for s in SCENARIOS
            if s.key in keys
        }
    try:
        yield futures
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _write_table()


def _engine(run: ScenarioRun, minor: str = NEWEST_MINOR) -> list[Finding]:
    name = run.old["metadata"]["name"]
    outcome = engine.compare_crds(
        {name: Crd(run.old)}, {name: Crd(run.new)}, kube_version=_kube_version(minor)
    )
    return list(outcome.findings)


def _engine_verdict(severity: Severity | None) -> Verdict:
    if severity is None or severity is Severity.INFO:
        return Verdict.OK
    return Verdict.WARNING if severity is Severity.WARNING else Verdict.ERROR


@pytest.mark.parametrize(("minor", "scenario_key", "claim_key"), list(_params()))
def test_rule_truth(runs: Runs, minor: str, scenario_key: str, claim_key: str) -> None:
    run = runs[minor][scenario_key].result()
    truth = run.truths[claim_key]
    claim = truth.claim
    findings = _engine(run, minor)
    here = [f for f in findings if f.code in claim.codes and f.path == claim.path]
    severity = max((f.severity for f in here), default=None)
    said = ", ".join(f"{f.code} {f.severity}" for f in here) or "nothing"
    if minor == NEWEST_MINOR:
        _TABLE[claim.key] = (truth, said)
    row = truth.row()
    context = f"apiserver {minor}: {row}\nengine at {claim.path}: {said}"
    observed, judged, expect = truth.verdict, truth.verdict, claim.expect
    if minor != NEWEST_MINOR and claim.key in ON_OLDEST:
        observed, expect = ON_OLDEST[claim.key]
        judged = observed
        assert truth.verdict is observed, f"the apiserver changed: {truth.verdict}\n{context}"
    elif claim.key in JUDGEMENTS:
        observed, judged, why = JUDGEMENTS[claim.key]
        assert truth.verdict is observed, f"the apiserver changed: {truth.verdict}\n{context}"
        context += f"\njudged on purpose: {why}"
    reported = {f.code for f in here}
    if not set(expect) <= reported:
        raise ModelDisagrees(f"missing {set(expect) - reported}\n{context}")
    if _engine_verdict(severity) is not judged:
        raise ModelDisagrees(f"engine {_engine_verdict(severity)} but expected {judged}\n{context}")


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(
            d,
            id=d.key,
            marks=[pytest.mark.xfail(strict=True, reason=d.false_because)]
            if d.false_because
            else [],
        )
        for d in DOC_CLAIMS
    ],
)
def test_docstring_claim(runs: Runs, doc: DocClaim) -> None:
    truth = runs[NEWEST_MINOR][_CLAIM_SCENARIO[doc.claim]].result().truths[doc.claim]
    assert doc.holds(truth), f"{doc.source}: {doc.sentence!r} is false: {truth.row()}"


@pytest.mark.parametrize(
    ("minor", "scenario_key"),
    [
        pytest.param(minor, s.key, id=s.key if minor == NEWEST_MINOR else f"{s.key} @{minor}")
        for minor in MINORS
        for s in SCENARIOS
    ],
)
def test_no_unexplained_findings(runs: Runs, minor: str, scenario_key: str) -> None:
    """Every finding of a scenario belongs to one of its claims (or a code it tolerates)."""
    run = runs[minor][scenario_key].result()
    explained = {(code, c.path) for c in run.scenario.claims for code in c.codes}
    extra = [
        f"{f.code} {f.severity} at {f.path}: {f.message}"
        for f in _engine(run, minor)
        if (f.code, f.path) not in explained and f.code not in run.scenario.tolerate
    ]
    assert not extra, "\n".join(extra)


def _write_table() -> None:
    target = os.environ.get("UG_TRUTH_TABLE")
    if not target or not _TABLE:
        return
    columns = ["claim", "crd update", "read-back", "update untouched", "status write",
               "create identical", "verdict"]  # fmt: skip
    lines = ["| " + " | ".join([*columns, "engine (1.35)"]) + " |"]
    lines.append("|" + "---|" * (len(columns) + 1))
    for key in [claim.key for _, claim in CLAIMS]:
        if key in _TABLE:
            truth, said = _TABLE[key]
            row = truth.row()
            cells = [row[col].replace("|", "\\|") for col in columns] + [said]
            lines.append("| " + " | ".join(cells) + " |")
    Path(target).write_text("\n".join(lines) + "\n")


ROLLED_BACK_V1 = (
    'status.storedVersions[1]: Invalid value: "v1": missing from spec.versions; v1 was'
    " previously a storage version, and must remain in spec.versions until a storage"
    " migration ensures no data remains persisted in v1 and removes v1 from"
    " status.storedVersions"
)


@pytest.mark.parametrize(
    ("v1_before", "alpha_after", "rollback_allowed", "severity"),
    [
        pytest.param("absent", "served", False, "error", id="ug106-first-served-rollback-refused"),
        pytest.param(
            "absent", "unserved", False, "error", id="ug106-first-served-alpha-unserved-refused"
        ),
        pytest.param("served", "served", True, "info", id="ug106-served-before-rollback-allowed"),
        pytest.param(
            "unserved", "served", True, "info", id="ug106-listed-unserved-rollback-allowed"
        ),
        pytest.param(
            "served", "unserved", True, "warning", id="ug106-alpha-unserved-rollback-allowed"
        ),
    ],
)
def test_storage_move_rollback(
    cluster: Cluster, v1_before: str, alpha_after: str, rollback_allowed: bool, severity: str
) -> None:
    """UG106's why, on the real apiserver: store an object at v1alpha1, move storage to v1,
    write one there, roll the CRD back. Refused exactly where the old CRD does not list v1
    (the rule's error, its witness); where it lists v1, served or not, the rollback is
    accepted and both objects read back unchanged at v1alpha1, the version the old CRD
    stores, so the move that stops serving v1alpha1 hurts only as UG105 says (a GET at
    v1alpha1 is 404 until the rollback): a warning."""
    namespace = f"rollback-{secrets.token_hex(3)}"
    plural = f"rollback{secrets.token_hex(3)}s"
    schema = root_schema()
    old_versions = [version_entry("v1alpha1", schema)]
    if v1_before != "absent":
        old_versions.append(
            version_entry("v1", schema, storage=False, served=v1_before == "served")
        )
    alpha = version_entry("v1alpha1", schema, storage=False, served=alpha_after == "served")
    old, new = (
        crd_body(plural, old_versions),
        crd_body(plural, [alpha, version_entry("v1", schema)]),
    )
    name = old["metadata"]["name"]
    said = engine.compare_crds({name: Crd(old)}, {name: Crd(new)}, kube_version=KUBE_VERSION)
    assert {(f.code, str(f.severity)) for f in said.findings if f.code == "UG106"} == {
        ("UG106", severity)
    }
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(old).expect_allowed()
    trial.create({"metadata": {"name": "written-as-v1alpha1"}, "spec": PLAIN}).expect_allowed()
    trial.apply_crd(new).expect_allowed()
    assert trial.stored_versions() == ["v1alpha1", "v1"]
    trial.create({"metadata": {"name": "written-as-v1"}, "spec": PLAIN}).expect_allowed()
    if alpha_after == "unserved":
        with pytest.raises(KubeError) as unserved:
            trial.get("written-as-v1alpha1", version="v1alpha1")
        assert unserved.value.code == 404
    rollback = trial.apply_crd(old)
    if not rollback_allowed:
        rollback.expect_refused(ROLLED_BACK_V1, code=422)
        return
    rollback.expect_allowed()
    for written in ("written-as-v1alpha1", "written-as-v1"):
        assert trial.get(written, version="v1alpha1")["spec"] == PLAIN
    trial.create({"metadata": {"name": "after-rollback"}, "spec": PLAIN}).expect_allowed()


@pytest.mark.parametrize(
    ("alpha_after", "apply_allowed", "expected"),
    [
        pytest.param(
            ("removed",),
            False,
            ("UG105", Severity.ERROR),
            id="ug105-removed-apply-of-object-applied-there-refused",
        ),
        pytest.param(
            ("unserved",),
            True,
            ("UG105", Severity.ERROR),
            id="ug105-unserved-apply-of-object-applied-there-allowed",
        ),
        pytest.param(
            ("unserved", "removed"),
            False,
            ("UG113", Severity.WARNING),
            id="ug113-unserved-then-removed-apply-of-object-applied-there-refused",
        ),
    ],
)
def test_version_removed_server_side_apply(
    cluster: Cluster,
    alpha_after: tuple[str, ...],
    apply_allowed: bool,
    expected: tuple[str, Severity],
) -> None:
    """UG105 and UG113, on the real apiserver: an object applied at v1alpha1 (its
    managedFields record it), then v1alpha1 set to served: false and/or removed from
    spec.versions, one CRD update per step. Reads at it are 404 either way; a server-side
    apply of the object at v1 fails only once it is removed. The engine judges the last step."""
    namespace = f"applied-{secrets.token_hex(3)}"
    plural = f"applied{secrets.token_hex(3)}s"
    schema = root_schema()

    def crd(alpha: str) -> Any:
        entry = version_entry("v1alpha1", schema, storage=False, served=alpha == "served")
        kept = [] if alpha == "removed" else [entry]
        return crd_body(plural, [*kept, version_entry("v1", schema)])

    steps = [crd(alpha) for alpha in ("served", *alpha_after)]
    group, kind = steps[0]["spec"]["group"], steps[0]["spec"]["names"]["kind"]
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(steps[0]).expect_allowed()

    def apply(version: str, touch: str) -> Any:
        body = {"apiVersion": f"{group}/{version}", "kind": kind,
                "metadata": {"name": "applied"}, "spec": {"touch": touch}}  # fmt: skip
        return cluster.admin.patch(
            trial.path(version, "applied"), body, APPLY_PATCH, fieldManager="gitops"
        )

    written = apply("v1alpha1", "t0")
    assert [m["apiVersion"] for m in written["metadata"]["managedFields"]] == [f"{group}/v1alpha1"]
    for step in steps[1:]:
        trial.apply_crd(step).expect_allowed()
    assert _read_refused(trial, "applied", "v1alpha1") is not None
    if apply_allowed:
        assert apply("v1", "t1")["spec"] == {"touch": "t1"}
    else:
        with pytest.raises(KubeError) as refused:
            apply("v1", "t1")
        assert refused.value.code == 500
        assert "request to convert CR to an invalid group/version" in refused.value.message
    name = steps[0]["metadata"]["name"]
    live = {**steps[-2], "status": {"storedVersions": trial.stored_versions()}}
    outcome = engine.compare_crds(
        {name: Crd(live)}, {name: Crd(steps[-1])}, kube_version=KUBE_VERSION
    )
    assert {(f.code, f.severity, f.path) for f in outcome.findings} == {(*expected, None)}


# Nothing listens on the discard port of loopback: every call of the webhook fails.
_UNREACHABLE_WEBHOOK = {
    "strategy": "Webhook",
    "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://127.0.0.1:9/convert"},
    },
}


def _two_versions(plural: str, alpha: dict[str, Any], conversion: dict[str, Any]) -> Any:
    """v1 stores and declares spec.extra; v1alpha1 is served beside it with schema alpha."""
    body = crd_body(
        plural,
        [
            version_entry("v1alpha1", alpha, storage=False),
            version_entry("v1", root_schema({"extra": STR})),
        ],
    )
    body["spec"]["conversion"] = conversion
    return body


@pytest.mark.parametrize(
    ("alpha", "severity"),
    [
        pytest.param(root_schema({"extra": STR}), Severity.INFO, id="ug108-to-none-one-schema"),
        pytest.param(root_schema(), Severity.ERROR, id="ug108-to-none-schemas-differ"),
    ],
)
def test_conversion_webhook_dropped(
    cluster: Cluster, alpha: dict[str, Any], severity: Severity
) -> None:
    """UG108 to None, on the real apiserver: an object stored as v1 under the webhook is read
    as v1alpha1 once the strategy is None. Under Webhook that read calls the webhook (here,
    nothing answers, so it fails); under None it succeeds by rewriting apiVersion, and the
    object reads back as written where the schemas agree, pruned where v1alpha1 does not
    declare spec.extra."""
    namespace = f"conversion-{secrets.token_hex(3)}"
    plural = f"conversion{secrets.token_hex(3)}s"
    old = _two_versions(plural, alpha, _UNREACHABLE_WEBHOOK)
    new = _two_versions(plural, alpha, {"strategy": "None"})
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(old).expect_allowed()
    written = {"touch": "t0", "extra": "kept"}
    trial.create({"metadata": {"name": "written-as-v1"}, "spec": written}).expect_allowed()
    with pytest.raises(KubeError, match="conversion webhook"):
        trial.get("written-as-v1", version="v1alpha1")
    live = {**old, "status": {"storedVersions": trial.stored_versions()}}
    trial.apply_crd(new).expect_allowed()
    read = wait_for(  # the handler swaps converters asynchronously
        lambda: trial.get("written-as-v1", version="v1alpha1"),
        timeout=20,
        what="v1alpha1 read without the webhook",
    )
    expected = written if severity is Severity.INFO else {"touch": "t0"}
    assert read["spec"] == expected
    name = old["metadata"]["name"]
    outcome = engine.compare_crds({name: Crd(live)}, {name: Crd(new)}, kube_version=KUBE_VERSION)
    assert {(f.code, f.severity) for f in outcome.findings} == {("UG108", severity)}


@pytest.mark.parametrize(
    ("alpha_served", "severity"),
    [
        pytest.param(False, Severity.INFO, id="ug108-to-webhook-storage-version-alone"),
        pytest.param(True, Severity.ERROR, id="ug108-to-webhook-second-version-served"),
    ],
)
def test_conversion_webhook_adopted(
    cluster: Cluster, alpha_served: bool, severity: Severity
) -> None:
    """UG108 to Webhook, on the real apiserver, with no webhook running: reads and writes of
    the storage version keep working; a read of another served version fails."""
    namespace = f"conversion-{secrets.token_hex(3)}"
    plural = f"conversion{secrets.token_hex(3)}s"
    schema = root_schema({"extra": STR})

    def crd(conversion: dict[str, Any]) -> Any:
        body = _two_versions(plural, schema, conversion)
        body["spec"]["versions"][0]["served"] = alpha_served
        return body

    old, new = crd({"strategy": "None"}), crd(_UNREACHABLE_WEBHOOK)
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(old).expect_allowed()
    trial.create({"metadata": {"name": "before"}, "spec": PLAIN}).expect_allowed()
    live = {**old, "status": {"storedVersions": trial.stored_versions()}}
    trial.apply_crd(new).expect_allowed()
    if alpha_served:
        failed = wait_for(  # the handler swaps converters asynchronously
            lambda: _read_refused(trial, "before", "v1alpha1"),
            timeout=20,
            what="v1alpha1 read through the webhook",
        )
        assert "conversion webhook" in failed
    trial.create({"metadata": {"name": "after"}, "spec": PLAIN}).expect_allowed()
    assert trial.get("before")["spec"] == PLAIN
    trial.update("before", lambda o: o["spec"].update(touch="t1")).expect_allowed()
    name = old["metadata"]["name"]
    outcome = engine.compare_crds({name: Crd(live)}, {name: Crd(new)}, kube_version=KUBE_VERSION)
    assert {(f.code, f.severity) for f in outcome.findings} == {("UG108", severity)}


def _read_refused(trial: CRDTrial, name: str, version: str) -> str | None:
    """The apiserver's message where reading the object at version fails, else None."""
    try:
        trial.get(name, version=version)
    except KubeError as err:
        return err.message
    return None


def _bound_in_second_version(served_before: bool) -> tuple[Any, Any]:
    """v1 stores; v1alpha1 bounds spec.n at 200, served or not, then serves it at 10."""
    plural = f"unserved{secrets.token_hex(3)}s"
    loose = root_schema({"n": INT})

    def crd(bound: int, served: bool) -> Any:
        bounded = root_schema({"n": with_(INT, maximum=bound)})
        return crd_body(
            plural,
            [
                version_entry("v1", loose),
                version_entry("v1alpha1", bounded, storage=False, served=served),
            ],
        )

    return crd(200, served_before), crd(10, True)


@pytest.mark.parametrize(
    ("served_before", "expected"),
    [
        pytest.param(
            False,
            {("UG110", "v1->v1alpha1", "spec.n", Severity.WARNING)},
            id="unserved-version-served-judged-by-what-the-others-wrote",
        ),
        pytest.param(
            True,
            {("UG208", "v1alpha1", "spec.n", Severity.WARNING)},
            id="served-version-judged-by-its-own-schema",
        ),
    ],
)
def test_a_version_first_served(
    cluster: Cluster, served_before: bool, expected: set[tuple[str, str, str, Severity]]
) -> None:
    """Issue 22 §3: a version the old CRD did not serve validated nothing, so its old bound
    (200) says nothing; what counts is what the other versions wrote (no bound) against the
    new one (10). Either way an object holding 150 passes an UPDATE through v1alpha1
    (ratcheted) and a CREATE through it is refused."""
    namespace = f"unserved-{secrets.token_hex(3)}"
    cluster.admin.ensure_namespace(namespace)
    old, new = _bound_in_second_version(served_before)
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(old).expect_allowed()
    written_as = "v1alpha1" if served_before else "v1"
    stored = {"metadata": {"name": "n150"}, "spec": {"n": 150}}
    trial.create(stored, version=written_as).expect_allowed()
    live = {**old, "status": {"storedVersions": trial.stored_versions()}}
    trial.apply_crd(new).expect_allowed()
    copy = {"metadata": {"name": "n150-copy"}, "spec": {"n": 150}}
    refused = wait_for(  # the handler swaps schemas asynchronously
        lambda: (a := trial.create(copy, version="v1alpha1", dry_run=True)).allowed is False and a,
        timeout=20,
        what="v1alpha1 served with maximum 10",
    )
    assert "should be less than or equal to 10" in refused.message
    update = trial.update(
        "n150", lambda o: o["spec"].update({"touch": "touched"}), version="v1alpha1"
    )
    update.expect_allowed()
    name = old["metadata"]["name"]
    outcome = engine.compare_crds({name: Crd(live)}, {name: Crd(new)}, kube_version=KUBE_VERSION)
    found = {(f.code, f.version, f.path, f.severity) for f in outcome.findings}
    assert found == expected


def _with_top_level(schema: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**schema, "properties": {**schema["properties"], **fields}}


_LABELS = {"type": "object", "additionalProperties": STR}


@pytest.mark.parametrize(
    ("old", "new", "update_allowed", "expected"),
    [
        pytest.param(
            _with_top_level(root_schema(), data=_LABELS, list=arr(STR)),
            _with_top_level(
                root_schema(),
                data=with_(_LABELS, maxProperties=1),
                list=arr(STR, maxItems=2),
            ),
            True,
            {("UG208", "data", Severity.WARNING), ("UG208", "list", Severity.WARNING)},
            id="sibling-of-spec-ratchets",
        ),
        pytest.param(
            root_schema(),
            root_schema(minProperties=2),
            False,
            {("UG208", "spec", Severity.ERROR)},
            id="spec-itself-changes-on-every-spec-update",
        ),
    ],
)
def test_top_level_fields_other_than_spec_and_status_ratchet(
    cluster: Cluster,
    old: dict[str, Any],
    new: dict[str, Any],
    update_allowed: bool,
    expected: set[tuple[str, str, Severity]],
) -> None:
    """Issue 22 §3: an update of spec leaves a top-level map or array beside it unchanged,
    so a tightened maxProperties or maxItems there is ratcheted; on spec it is not."""
    namespace = f"toplevel-{secrets.token_hex(3)}"
    cluster.admin.ensure_namespace(namespace)
    plural = f"toplevel{secrets.token_hex(3)}s"
    old_crd = crd_body(plural, [version_entry("v1", old)])
    new_crd = crd_body(plural, [version_entry("v1", new)])
    trial = CRDTrial(cluster.admin, namespace)
    trial.apply_crd(old_crd).expect_allowed()
    stored = {
        "metadata": {"name": "wide"},
        "spec": {"touch": "t0"},
        "data": {"a": "x", "b": "y"},
        "list": ["a", "b", "c"],
    }
    trial.create(stored).expect_allowed()
    trial.apply_crd(new_crd).expect_allowed()
    copy = {**stored, "metadata": {"name": "wide-copy"}}
    # the handler swaps schemas asynchronously: a refused copy shows the new one is served
    wait_for(
        lambda: not trial.create(copy, dry_run=True).allowed,
        timeout=20,
        what="the new schema served",
    )
    update = trial.update("wide", lambda o: o["spec"].update({"touch": "touched"}))
    assert update.allowed is update_allowed, update.message
    name = old_crd["metadata"]["name"]
    outcome = engine.compare_crds(
        {name: Crd(old_crd)}, {name: Crd(new_crd)}, kube_version=KUBE_VERSION
    )
    assert {(f.code, f.path, f.severity) for f in outcome.findings} == expected
