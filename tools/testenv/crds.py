"""Apiserver truth for CRD evolution: apply CRD version A, store objects, apply version B,
then read, CREATE and UPDATE under B and record what the apiserver allowed or refused.

The engine's rules are held to this: for a pair of CRDs the rule predicts "refused",
"data pruned", "defaulted on read", "ratcheted"...; :class:`CRDTrial` shows what a real
kube-apiserver does with the same pair.

A CRD update takes effect in the apiserver's custom-resource handler asynchronously (an
informer event swaps the handler's schema). :meth:`CRDTrial.apply_crd` waits for
Established, for the watch cache to hold the new CRD revision and for discovery to list
every served version, then a short grace period; checks that depend on the new schema
should still prefer :meth:`CRDTrial.wait_read` over a single read.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .kube import JSON, Kube, KubeError, wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SETTLE_SECONDS = 0.3


@dataclass
class Attempt:
    """The apiserver's answer to one write."""

    verb: str
    allowed: bool
    code: int
    message: str = ""
    object: JSON | None = None
    causes: list[JSON] | None = None

    @classmethod
    def from_error(cls, verb: str, err: KubeError) -> Attempt:
        return cls(verb, False, err.code, err.message, None, err.causes)

    def expect_allowed(self) -> JSON:
        assert self.allowed, f"{self.verb} refused ({self.code}): {self.message}"
        assert self.object is not None
        return self.object

    def expect_refused(self, *fragments: str, code: int | None = None) -> str:
        """Assert the write was refused and its message holds every fragment; return it."""
        assert not self.allowed, f"{self.verb} was allowed, expected refusal: {self.object}"
        if code is not None:
            assert self.code == code, f"{self.verb}: HTTP {self.code}, want {code}: {self.message}"
        for fragment in fragments:
            assert fragment in self.message, f"{fragment!r} not in {self.message!r}"
        return self.message


def storage_version(crd: JSON) -> str:
    return str(next(v["name"] for v in crd["spec"]["versions"] if v.get("storage")))


class CRDTrial:
    """One CRD under test, its custom resources and the writes tried against them."""

    def __init__(self, kube: Kube, namespace: str | None = None) -> None:
        self.kube = kube
        self.namespace = namespace
        self.crd: JSON | None = None  # as last returned by the apiserver
        if namespace:
            kube.ensure_namespace(namespace)

    # The CRD -------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        assert self.crd is not None
        return str(self.crd["metadata"]["name"])

    def apply_crd(self, crd: JSON, *, settle: bool = True) -> Attempt:
        """Create the CRD, or replace its spec (status, incl. storedVersions, is kept by the
        apiserver). Waits until it is served, unless refused."""
        name = crd["metadata"]["name"]
        body = copy.deepcopy(crd)
        body.setdefault("apiVersion", "apiextensions.k8s.io/v1")
        body.setdefault("kind", "CustomResourceDefinition")
        current = self.kube.get_or_none(f"{CRDS}/{name}")
        try:
            if current is None:
                verb = "CREATE CRD"
                result = self.kube.create(CRDS, body)
            else:
                verb = "UPDATE CRD"
                body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                result = self.kube.replace(f"{CRDS}/{name}", body)
        except KubeError as err:
            return Attempt.from_error(verb, err)
        self.crd = result
        if settle:
            self.crd = self._settle(result)
        return Attempt(verb, True, 200, "", self.crd)

    def get_crd(self) -> JSON:
        self.crd = self.kube.get(f"{CRDS}/{self.name}")
        return self.crd

    def stored_versions(self) -> list[str]:
        return list(self.get_crd()["status"].get("storedVersions") or [])

    def delete_crd(self) -> None:
        if self.crd is not None:
            self.kube.delete(f"{CRDS}/{self.name}")

    def _settle(self, crd: JSON) -> JSON:
        name = crd["metadata"]["name"]
        rv = crd["metadata"]["resourceVersion"]

        def established() -> JSON | None:
            got = self.kube.get(f"{CRDS}/{name}")
            conds = {c["type"]: c["status"] for c in got.get("status", {}).get("conditions", [])}
            ok = conds.get("Established") == "True" and conds.get("NamesAccepted") == "True"
            return got if ok else None

        current: JSON = wait_for(established, timeout=30, what=f"CRD {name} Established")
        # The watch cache (which feeds the handler's informer) has seen this revision:
        self.kube.get(CRDS, resourceVersion=rv, resourceVersionMatch="NotOlderThan", limit=1)
        group, plural = current["spec"]["group"], current["spec"]["names"]["plural"]
        for version in (v["name"] for v in current["spec"]["versions"] if v.get("served")):

            def listed(version: str = version) -> bool:
                doc = self.kube.get(f"/apis/{group}/{version}")
                return any(r["name"] == plural for r in doc.get("resources", []))

            wait_for(listed, timeout=30, what=f"discovery of {plural}.{group}/{version}")
        time.sleep(SETTLE_SECONDS)
        return current

    # Custom resources ------------------------------------------------------------------------
    def path(self, version: str | None = None, name: str | None = None) -> str:
        assert self.crd is not None, "apply a CRD first"
        spec = self.crd["spec"]
        version = version or storage_version(self.crd)
        p = f"/apis/{spec['group']}/{version}"
        if spec["scope"] == "Namespaced":
            assert self.namespace, "a namespaced CRD needs CRDTrial(namespace=...)"
            p += f"/namespaces/{self.namespace}"
        p += f"/{spec['names']['plural']}"
        return p + (f"/{name}" if name else "")

    def _body(self, obj: JSON, version: str | None) -> tuple[JSON, str]:
        assert self.crd is not None
        body = copy.deepcopy(obj)
        version = version or body.get("apiVersion", "").rpartition("/")[2] or None
        version = version or storage_version(self.crd)
        body["apiVersion"] = f"{self.crd['spec']['group']}/{version}"
        body.setdefault("kind", self.crd["spec"]["names"]["kind"])
        return body, version

    def create(self, obj: JSON, *, version: str | None = None, dry_run: bool = False) -> Attempt:
        body, version = self._body(obj, version)
        query: dict[str, Any] = {"dryRun": "All"} if dry_run else {}
        try:
            return Attempt(
                "CREATE", True, 201, "", self.kube.create(self.path(version), body, **query)
            )
        except KubeError as err:
            return Attempt.from_error("CREATE", err)

    def create_all(self, objects: Sequence[JSON]) -> list[JSON]:
        return [self.create(o).expect_allowed() for o in objects]

    def get(self, name: str, *, version: str | None = None) -> JSON:
        result: JSON = self.kube.get(self.path(version, name))
        return result

    def wait_read(
        self,
        name: str,
        predicate: Callable[[JSON], bool],
        *,
        version: str | None = None,
        timeout: float = 10.0,
        what: str = "",
    ) -> JSON:
        """Read until ``predicate`` holds (the handler swaps schemas asynchronously)."""

        def check() -> JSON | None:
            obj = self.get(name, version=version)
            return obj if predicate(obj) else None

        result: JSON = wait_for(
            check, timeout=timeout, what=what or f"{name} to satisfy {predicate}"
        )
        return result

    def update(
        self,
        name: str,
        mutate: Callable[[JSON], None],
        *,
        version: str | None = None,
        subresource: str = "",
    ) -> Attempt:
        """GET, mutate in place, PUT (a full UPDATE, as controllers do)."""
        obj = self.get(name, version=version)
        mutate(obj)
        path = self.path(version, name) + (f"/{subresource}" if subresource else "")
        try:
            return Attempt("UPDATE", True, 200, "", self.kube.replace(path, obj))
        except KubeError as err:
            return Attempt.from_error("UPDATE", err)

    def patch(self, name: str, merge_patch: JSON, *, version: str | None = None) -> Attempt:
        try:
            return Attempt(
                "PATCH", True, 200, "", self.kube.patch(self.path(version, name), merge_patch)
            )
        except KubeError as err:
            return Attempt.from_error("PATCH", err)


@dataclass
class Evolution:
    trial: CRDTrial
    stored: list[JSON]  # the objects as stored under version A
    crd_update: Attempt  # the apiserver's answer to the update A -> B


def evolve(
    kube: Kube,
    before: JSON,
    after: JSON,
    objects: Sequence[JSON] = (),
    *,
    namespace: str | None = None,
) -> Evolution:
    """Apply CRD ``before``, create ``objects``, then try CRD ``after``.

    ``before`` and every object must be accepted (the test is wrong otherwise); whether
    ``after`` is accepted is the result. Go on with ``result.trial`` for CREATE/UPDATE/read
    checks under ``after``.
    """
    trial = CRDTrial(kube, namespace)
    trial.apply_crd(before).expect_allowed()
    stored = trial.create_all(objects)
    return Evolution(trial, stored, trial.apply_crd(after))
