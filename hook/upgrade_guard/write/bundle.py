"""The CRD bundle a chart carries to its hook: the CRDs without schema documentation, as one
minified JSON List, gzip-compressed (``upgrade-guard pack``; the hook reads it back with
``load_documents``). Byte-for-byte reproducible, so ``pack --check`` can compare."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from typing import Any

from upgrade_guard.crd import Crd
from upgrade_guard.schema import without_documentation

KIB = 1024
# A ConfigMap holds at most 1 MiB. The Helm release Secret (also at most 1 MiB) holds the
# bundle twice, base64-encoded and then gzip-compressed with everything else: once among the
# chart's files and once in the rendered hook manifest. Measured against the apiserver
# (tests/cluster/test_chart_snippets.py): 256 KiB of bundle makes a 676 KiB release Secret,
# leaving the rest for the chart itself; 384 KiB is refused as too long.
BUNDLE_LIMIT = 256 * KIB


def _undocumented(crd: Crd) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(crd.raw))  # a deep, plain copy
    for version in body["spec"].get("versions") or []:
        validation = version.get("schema")
        if isinstance(validation, dict) and "openAPIV3Schema" in validation:
            validation["openAPIV3Schema"] = without_documentation(validation["openAPIV3Schema"])
    return body


def pack(crds: Mapping[str, Crd]) -> bytes:
    """The gzip bundle of crds, in name order."""
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [_undocumented(crds[name]) for name in sorted(crds)],
    }
    text = json.dumps(listing, separators=(",", ":"), ensure_ascii=False)
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def too_large(bundle: bytes) -> str | None:
    """Why the bundle cannot ride in a Helm release, or None when it fits."""
    if len(bundle) <= BUNDLE_LIMIT:
        return None
    return (
        f"the packed CRDs are {len(bundle) / KIB:.0f} KiB, over the {BUNDLE_LIMIT // KIB} KiB a "
        "Helm release can carry (its Secret holds at most 1 MiB and stores the bundle twice, "
        "base64-encoded): split the CRDs over several charts, one guard each, or run "
        "`upgrade-guard hook --crds DIR` as a pipeline step before `helm upgrade` instead of "
        "as a hook"
    )
