"""What `helm guard` reads of helm's output, pure: the crds/ files of a `helm template
--include-crds` stream, and an adopted chart's guard Job among a release's hooks. Each case
that is taken beside the nearest one that is not."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from upgrade_guard.load.documents import LoadError
from upgrade_guard.load.helm_output import crds_dir_files, crds_dir_names, guard_job
from upgrade_guard.load.helm_record import record_of

# (the `# Source:` path helm prints, taken as a crds/ file)
SOURCES = [
    ("app/crds/gadgets.yaml", True),
    ("app/templates/crds/gadgets.yaml", False),  # rendered from templates/: the manifest's
    ("app/charts/crds/crds/alerts.yaml", True),  # a subchart named crds (kube-prometheus)
    ("app/charts/sub/templates/a.yaml", False),
    ("app/charts/sub/charts/deeper/crds/nested/b.yaml", True),
    ("app/crds.yaml", False),
]


@pytest.mark.parametrize(("path", "taken"), SOURCES)
def test_crds_dir_files_are_told_by_their_source_path(path: str, taken: bool) -> None:
    stream = (
        f"---\n# Source: app/templates/cm.yaml\nkind: ConfigMap\n---\n# Source: {path}\nkind: X\n"
    )
    assert list(crds_dir_files(stream)) == ([(path, "kind: X\n")] if taken else [])


def _hook(kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    manifest = json.dumps({"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, **body})
    return {"name": name, "kind": kind, "path": f"c/templates/{name}.yaml", "manifest": manifest}


def _job(name: str = "rel-upgrade-guard", args: tuple[str, ...] = ("hook", "--revision=2")) -> Any:
    container = {
        "name": "g",
        "args": list(args),
        "volumeMounts": [{"name": "inputs", "mountPath": "/etc/upgrade-guard"}],
    }
    pod = {
        "containers": [container],
        "volumes": [{"name": "inputs", "configMap": {"name": "rel-upgrade-guard"}}],
    }
    return _hook("Job", name, {"spec": {"template": {"spec": pod}}})  # fmt: skip


CONFIG_MAP = _hook("ConfigMap", "rel-upgrade-guard", {
    "data": {"images.yaml": "images: {}\n"},
    "binaryData": {"crds.json.gz": base64.b64encode(b"\x1f\x8b").decode()}})  # fmt: skip


def _listed(*hooks: dict[str, Any]) -> dict[str, Any]:
    """The hooks as one List hook, as the library renders what its Job needs."""
    items = [json.loads(hook["manifest"]) for hook in hooks]
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    return {"name": "rel-upgrade-guard", "kind": "List", "path": "c/t.yaml", "manifest": manifest}


# The ConfigMap a hook of its own (libraries before the List), or an item of the List hook.
@pytest.mark.parametrize("config_map", [CONFIG_MAP, _listed(CONFIG_MAP)], ids=["hook", "list"])
def test_the_guard_job_gives_the_hook_arguments_and_its_files(config_map: Any) -> None:
    found = guard_job("release c-1.0.0", {"hooks": [config_map, _job()]})
    assert found is not None
    assert found.args == ("--revision=2",)
    assert found.mount == "/etc/upgrade-guard"
    assert found.files == {"images.yaml": b"images: {}\n", "crds.json.gz": b"\x1f\x8b"}


@pytest.mark.parametrize(
    "hooks",
    [
        [],  # no hooks: the chart adopted nothing
        [CONFIG_MAP, _job(name="rel-migrate")],  # another Job
        [CONFIG_MAP, _job(args=("migrate",))],  # a Job so named running something else
    ],
)
def test_a_chart_without_the_guard_job_adopted_nothing(hooks: list[Any]) -> None:
    assert guard_job("release c-1.0.0", {"hooks": hooks}) is None


def test_a_guard_job_without_its_config_map_is_bad_input_naming_it() -> None:
    with pytest.raises(LoadError, match="the guard's Job rel-upgrade-guard is not as the library"):
        guard_job("release c-1.0.0", {"hooks": [_job()]})


def test_a_dry_runs_release_json_is_read_as_a_stored_record() -> None:
    body = {"name": "rel", "version": 3, "info": {"status": "pending-upgrade"},
            "manifest": "---\nkind: ConfigMap\n", "config": {"password": "never-read"},
            "chart": {"metadata": {"name": "c", "version": "2.0.0"}}}  # fmt: skip
    record = record_of("sh.helm.release.v1.rel.v3", body)
    assert (record.operation, record.revision, record.chart) == ("upgrade", 3, "c-2.0.0")
    assert "never-read" not in repr(record)
    with pytest.raises(LoadError, match=r"release record sh\.helm\.release\.v1\.rel\.v3: not"):
        record_of("sh.helm.release.v1.rel.v3", {"name": "rel", "version": 3})


def test_the_charts_own_crds_dir_files_are_named_from_the_release_json() -> None:
    files = [{"name": "crds/b.yaml"}, {"name": "templates/crds/c.yaml"}, {"name": "crds/a.json"},
             {"name": "README.md"}]  # fmt: skip
    assert crds_dir_names({"chart": {"files": files}}) == ["crds/a.json", "crds/b.yaml"]
    assert crds_dir_names({"chart": {"files": None}}) == []
