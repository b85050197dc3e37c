"""Helm's release records, as its default storage driver keeps them, and which of them an
operation replaces.

Helm 4 writes the pending record (status ``pending-install``, ``pending-upgrade`` or
``pending-rollback``, the rendered manifest included) before it runs the ``pre-*`` hooks.
It is the Secret ``sh.helm.release.v1.<release>.v<revision>`` in the release's namespace;
its ``release`` data is base64 of the gzipped JSON record. Helm then applies the pending
manifest and deletes what the *current* record's manifest has and the pending one lacks,
unless the live object carries ``helm.sh/resource-policy: keep``. The current record
(pkg/action upgrade.go, rollback.go): for a rollback, the last record; for an upgrade, the
last record if deployed, else the deployed one, else the last one when it failed or was
superseded. Only the manifest, status, revision, chart name, version and annotations, the
hooks' names and the policy the release's own guard ran with (its hook ConfigMap's
``policy.yaml``, a chart file) are kept: never the values.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from upgrade_guard.crd import Crd
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import GZIP_MAGIC, LoadError, documents_of
from upgrade_guard.load.rendered import Item, manifests_of, noting_manifests
from upgrade_guard.manifests import Manifests

PENDING = {
    "pending-install": "install",
    "pending-upgrade": "upgrade",
    "pending-rollback": "rollback",
}
WINDOW_ABOVE = 32  # revisions above the rendered one the library grants `get` on
WINDOW_BELOW = 16  # and below it
GUARD_SUFFIX = "-upgrade-guard"  # the library's hook objects: RELEASE-upgrade-guard
POLICY_KEY = "policy.yaml"


def record_name(release: str, revision: int) -> str:
    return f"sh.helm.release.v1.{release}.v{revision}"


@dataclass(frozen=True)
class Record:
    """One release record, without its values."""

    name: str
    revision: int
    status: str
    manifest: str
    chart: str  # NAME-VERSION
    chart_annotations: Mapping[str, str]
    hooks: tuple[str, ...]  # KIND/NAME of each hook
    guard_policy: Any = None  # the policy document the release's guard ran with, if any
    # The manifest as read, by ``normalize``: its CRDs and its roles and webhook
    # configurations, noted in the same pass (a record is large; the plugin and the
    # pipeline each ask for both).
    _read: dict[bool, tuple[dict[str, Crd], list[Item]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def operation(self) -> str | None:
        """install, upgrade or rollback while the record is pending."""
        return PENDING.get(self.status)

    def _contents(self, normalize: bool) -> tuple[dict[str, Crd], list[Item]]:
        if normalize not in self._read:
            items: list[Item] = []
            documents = documents_of(f"release record {self.name}", self.manifest.encode())
            crds = crds_from(
                noting_manifests(documents, items), validate=False, normalize=normalize
            )
            self._read[normalize] = crds, items
        return self._read[normalize]

    def crds(self, *, normalize: bool = False) -> dict[str, Crd]:
        """The CustomResourceDefinitions the manifest applies, by name (``normalize``: as
        ``crds_from``)."""
        return dict(self._contents(normalize)[0])

    def manifests(self) -> Manifests:
        """The roles and webhook configurations the manifest applies."""
        read = next(iter(self._read.values()), None) or self._contents(False)
        return manifests_of(read[1])


def body_of(name: str, secret: Any) -> Mapping[str, Any]:
    """The release JSON a record Secret holds, from its body as the apiserver returns it."""
    try:
        raw = base64.b64decode(secret["data"]["release"], validate=True)
        packed = base64.b64decode(raw, validate=True)
        text = gzip.decompress(packed) if packed[:2] == GZIP_MAGIC else packed
        body = json.loads(text)
    except (KeyError, TypeError, ValueError, binascii.Error, zlib.error, EOFError) as error:
        raise LoadError(
            f"release record {name}: not a Helm release record ({type(error).__name__})"
        ) from None
    if not isinstance(body, dict):
        raise LoadError(f"release record {name}: not a Helm release record (not an object)")
    return body


def decode(name: str, secret: Any) -> Record:
    """A record from the Secret's body as the apiserver returns it."""
    return record_of(name, body_of(name, secret))


def record_of(name: str, body: Mapping[str, Any]) -> Record:
    """A record from the release JSON, as Helm stores it and as `helm upgrade --dry-run
    --output json` prints it (the same shape)."""
    try:
        info = body["info"]
        metadata = body.get("chart", {}).get("metadata", {})
        return Record(
            name=name,
            revision=int(body["version"]),
            status=str(info["status"]),
            manifest=str(body.get("manifest") or ""),
            chart=f"{metadata.get('name', '?')}-{metadata.get('version', '?')}",
            chart_annotations=dict(metadata.get("annotations") or {}),
            hooks=tuple(
                f"{hook.get('kind')}/{hook.get('name')}" for hook in body.get("hooks") or []
            ),
            guard_policy=_guard_policy(f"release record {name}", body.get("hooks") or []),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise LoadError(
            f"release record {name}: not a Helm release record ({type(error).__name__})"
        ) from None


def hook_objects(where: str, hook: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The objects of one of a release's hooks: its manifest's documents, and a List's items
    each (the library renders what its guard's Job needs as one List hook)."""
    path = f"{where}: hook {hook.get('path') or hook.get('name') or '?'}"
    for document in documents_of(path, str(hook.get("manifest") or "").encode()):
        body = document.body
        if not isinstance(body, Mapping):
            continue
        items = body.get("items") if body.get("kind") == "List" else [body]
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping) and isinstance(item.get("metadata"), Mapping):
                yield item


def _guard_policy(where: str, hooks: list[Any]) -> Any:
    """The policy document in the guard's hook ConfigMap (the library's RELEASE-upgrade-guard,
    data ``policy.yaml``, a hook of its own before the library rendered it in a List), None
    without one."""
    for hook in hooks:
        if not str(hook.get("name")).endswith(GUARD_SUFFIX):
            continue
        for item in hook_objects(where, hook):
            name = str(item["metadata"].get("name"))
            if item.get("kind") != "ConfigMap" or not name.endswith(GUARD_SUFFIX):
                continue
            text = (item.get("data") or {}).get(POLICY_KEY)
            if isinstance(text, str):
                policy = list(documents_of(f"{where}: hook {name} {POLICY_KEY}", text.encode()))
                return policy[0].body if len(policy) == 1 else None
    return None


@dataclass(frozen=True)
class Operation:
    """The pending record and the one it replaces (None on install)."""

    pending: Record
    current: Record | None


Fetch = Callable[[int], Record | None]


def find_operation(rendered_revision: int, fetch: Fetch) -> Operation | None:
    """The operation Helm is doing, from the records at and above the revision the hook
    was rendered at; None when there is no pending record (not run by Helm: Argo CD renders
    with `helm template` and keeps none). A rollback runs the hooks of an earlier release,
    rendered at its revision (whose record may since have been pruned): its pending record
    is the last one, above it."""
    found: list[Record] = []
    for revision in range(rendered_revision, rendered_revision + WINDOW_ABOVE + 1):
        record = fetch(revision)
        if record is None:
            if found:
                break
            continue
        found.append(record)
        if revision == rendered_revision and record.operation is not None:
            break
    else:
        if found:
            raise LoadError(
                f"no pending release record within revisions {rendered_revision}-"
                f"{rendered_revision + WINDOW_ABOVE} (the hook was rendered at revision"
                f" {rendered_revision}): upgrade instead of rolling back this far"
            )
    if not found or found[-1].operation is None:
        return None
    pending = found[-1]
    return Operation(pending, replaced(pending, fetch))


def replaced(pending: Record, fetch: Fetch) -> Record | None:
    """The record the pending operation replaces: what Helm diffs against and deletes from."""
    if pending.operation == "install":
        return None
    last = fetch(pending.revision - 1)
    if last is None or pending.operation == "rollback" or last.status == "deployed":
        return last
    lowest = max(1, pending.revision - WINDOW_BELOW)
    for revision in range(pending.revision - 2, lowest - 1, -1):
        found = fetch(revision)
        if found is not None and found.status == "deployed":
            return found
    if last.status in ("failed", "superseded"):
        return last
    raise LoadError(
        f"release record {last.name} is {last.status} and no record within revisions"
        f" {lowest}-{pending.revision - 1} is deployed: cannot tell what Helm would replace"
    )
