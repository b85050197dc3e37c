"""What `helm guard` reads of helm's own output besides the release record: the documents of
a chart's ``crds/`` directories in a ``helm template --include-crds`` stream, and, in a chart
that adopted the library, the guard's Job as rendered among the release's hooks.

Helm prints every document of ``helm template`` after a ``# Source: PATH`` line; the files of
``crds/`` (the chart's and its subcharts': ``CHART/crds/...``, ``CHART/charts/SUB/crds/...``)
are printed as they are, never rendered as templates.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from upgrade_guard.load.documents import LoadError
from upgrade_guard.load.helm_record import GUARD_SUFFIX, hook_objects

_SOURCE = re.compile(r"(?m)^---\n# Source: (.+)\n")
_CRDS_DIR = re.compile(r"[^/]+(?:/charts/[^/]+)*/crds/.+")


def crds_dir_files(stream: str) -> Iterator[tuple[str, str]]:
    """Each ``crds/`` file of a ``helm template --include-crds`` stream: (path, text)."""
    parts = _SOURCE.split(stream)
    # [before the first source, path, text, path, text, ...]
    for path, text in zip(parts[1::2], parts[2::2], strict=True):
        if _CRDS_DIR.fullmatch(path.strip()):
            yield path.strip(), text


def crds_dir_names(body: Mapping[str, Any]) -> list[str]:
    """The files of the chart's own crds/ in the release JSON (its subcharts' are not there)."""
    files = (body.get("chart") or {}).get("files") or []
    names = (str(f.get("name", "")) for f in files if isinstance(f, Mapping))
    return sorted(name for name in names if name.startswith("crds/"))


@dataclass(frozen=True)
class GuardJob:
    """The guard's Job as the library renders it: the hook's arguments (after ``hook``) and
    the files of the ConfigMap mounted at ``mount``, by name."""

    args: tuple[str, ...]
    mount: str
    files: Mapping[str, bytes]


def _hook_objects(where: str, body: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
    """The release's hook objects by (kind, name)."""
    hooks = body.get("hooks") or []
    return {
        (str(item.get("kind")), str(item["metadata"].get("name"))): item
        for hook in (hooks if isinstance(hooks, list) else [])
        if isinstance(hook, Mapping)
        for item in hook_objects(where, hook)
    }


def guard_job(where: str, body: Mapping[str, Any]) -> GuardJob | None:
    """The adopted guard's Job among the release's hooks (release JSON, as Helm stores it and
    prints it with ``--output json``); None when the chart did not adopt the library."""
    objects = _hook_objects(where, body)
    job = next(
        (o for (kind, name), o in objects.items() if kind == "Job" and name.endswith(GUARD_SUFFIX)),
        None,
    )
    if job is None:
        return None
    try:
        pod = job["spec"]["template"]["spec"]
        container = pod["containers"][0]
        args = [str(arg) for arg in container.get("args") or []]
        if args[:1] != ["hook"]:
            return None
        mount = container["volumeMounts"][0]
        volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
        config_map = objects[("ConfigMap", volume["configMap"]["name"])]
        files = {name: str(text).encode() for name, text in (config_map.get("data") or {}).items()}
        for name, data in (config_map.get("binaryData") or {}).items():
            files[name] = base64.b64decode(str(data), validate=True)
    except (KeyError, IndexError, TypeError, StopIteration, binascii.Error) as error:
        raise LoadError(
            f"{where}: the guard's Job {job.get('metadata', {}).get('name')} is not as the"
            f" library renders it ({type(error).__name__}): build the chart's dependencies"
            " again (helm dependency build)"
        ) from None
    return GuardJob(tuple(args[1:]), str(mount["mountPath"]), files)
