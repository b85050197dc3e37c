"""Whether a value a GET returns is stored, or may be a default applied on read only.

A GET fills in what the stored object lacks with its schema's defaults, and the stored
bytes are not observable through the API. A value the live schema defaults is known to be
stored when (measured on kube-apiserver v1.35.4, tests/cluster/test_hook_evidence.py):

- it is not what defaulting gives where the object lacks it: a client wrote it;
- a ``managedFields`` entry owns it: it was in an object a manager wrote, sent or filled in
  by defaulting on that write (a create under the default owns the defaulted field);
- the object was written after the live CRD last changed (its ``resourceVersion`` is above
  the CRD's): every write stores the defaults the object reads back with, even a label
  patch that owns no field of ``spec``.

Otherwise it may have been defaulted on read only (an object last written before its CRD
gained the default): removing the field then loses nothing that is stored.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from upgrade_guard import schema as schemas

from . import readback, values

Steps = list[str | int]


def may_be_read_default(
    obj: Mapping[str, Any],
    steps: Steps,
    live_schemas: Iterable[values.Schema],
    live_resource_version: str | None,
) -> bool:
    """Whether the value of ``obj`` (as a GET returned it) at ``steps`` may be a default
    applied on read by one of the live CRD's version schemas, rather than stored."""
    present, value = _at(obj, steps)
    if not present or not steps or isinstance(steps[-1], int):  # defaults fill fields only
        return False
    if _written_after(obj, live_resource_version) or _owned(obj, steps):
        return False
    return any(_defaulted(obj, steps, schema, value) for schema in live_schemas)


def _at(obj: Any, steps: Steps) -> tuple[bool, Any]:
    node = obj
    for step in steps:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return False, None
        elif not isinstance(node, dict) or step not in node:
            return False, None
        node = node[step]
    return True, node


def _written_after(obj: Mapping[str, Any], live_resource_version: str | None) -> bool:
    written = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    changed = str(live_resource_version or "")
    return written.isdigit() and changed.isdigit() and int(written) > int(changed)


def _owned(obj: Mapping[str, Any], steps: Steps) -> bool:
    """Whether a managedFields entry owns the field at ``steps`` or anything in it. Only
    object fields are followed (list items are keyed in ways not worth reproducing here:
    a field below a list item counts as not owned)."""
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        node = (entry or {}).get("fieldsV1") or {}
        for step in steps:
            if isinstance(step, int) or not isinstance(node, dict):
                node = None
                break
            node = node.get(f"f:{step}")
        if node is not None:
            return True
    return False


def _defaulted(obj: Mapping[str, Any], steps: Steps, schema: values.Schema, value: Any) -> bool:
    """Whether defaulting by ``schema`` gives ``value`` at ``steps`` where the object lacks
    it."""
    lacking = copy.deepcopy(dict(obj))
    parent: Any = lacking
    for step in steps[:-1]:
        parent = parent[step]
    del parent[steps[-1]]
    read = readback.coerce(lacking, schema)[0]
    present, defaulted = _at(read, steps)
    return present and schemas.deep_equal(defaulted, value)
