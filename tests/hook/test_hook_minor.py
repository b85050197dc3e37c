"""The hook judges the chart's CRDs at the minor the cluster's /version gives: a CRD that
minor's apiserver refuses is bad input (exit 2), and a minor outside the model's range is
judged as the nearest, with a note. The cluster is a stand-in answering the reads the run
makes (the real one, v1.35, is tests/cluster's)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from crd_builders import NAME, field_crd
from upgrade_guard.commands.hook import Inputs, prepare
from upgrade_guard.load.documents import LoadError
from upgrade_guard.pipelines import hook_run
from upgrade_guard.report import hook_log

PLAIN = field_crd({"type": "string", "maxLength": 64})
SEMVER = field_crd(
    {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "isSemver(self)"}]}
)


class Cluster:
    """Answers /version with ``version`` and serves ``crds``; nothing else exists."""

    attempts = 1

    def __init__(self, version: tuple[int, int], crds: dict[str, Any]) -> None:
        self.version, self.crds = version, crds

    def server_version(self) -> tuple[int, int]:
        return self.version

    def get_crds(self, names: Iterable[str]) -> dict[str, Any]:
        return {name: self.crds.get(name) for name in names}

    def get_named(self, collection: str, resource: str, names: Iterable[str]) -> dict[str, Any]:
        return dict.fromkeys(names)


def _run(tmp_path: Path, version: tuple[int, int]) -> hook_run.Judged | hook_run.Undecided:
    bundle = tmp_path / f"crds-{version[0]}.{version[1]}.yaml"
    bundle.write_text(yaml.safe_dump(SEMVER))
    prepared = prepare(Inputs(crds=str(bundle)))
    request = hook_run.Request(prepared, "pre-upgrade", in_helm=False, evidence_limit=0)
    return hook_run.run(request, Cluster(version, {NAME: PLAIN}))  # type: ignore[arg-type]


def test_a_chart_crd_the_clusters_minor_refuses_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as raised:
        _run(tmp_path, (1, 33))
    assert "the apiserver of Kubernetes 1.33 refuses this CRD" in str(raised.value)
    assert "Kubernetes 1.33 does not know isSemver" in str(raised.value)


def test_the_newest_minor_and_a_newer_one_accept_it(tmp_path: Path) -> None:
    newest = _run(tmp_path, (1, 35))
    assert isinstance(newest, hook_run.Judged)
    assert newest.outcome.facts == ()
    newer = _run(tmp_path, (1, 36))
    assert isinstance(newer, hook_run.Judged)
    assert [label for label, _ in newer.outcome.facts] == ["note"]
    assert newer.outcome.facts[0][1].startswith("Kubernetes 1.36 is newer than the newest minor")


def test_the_hook_report_carries_the_note(tmp_path: Path) -> None:
    newer = _run(tmp_path, (1, 36))
    assert isinstance(newer, hook_run.Judged)
    lines = hook_log.render(newer.outcome, newer.operation, newer.checked).splitlines()
    assert lines[1].startswith("note: Kubernetes 1.36 is newer than the newest minor")


# dyn() hides the field's size from cel-go v0.22's estimator (1.32): its rule is over every
# budget there, and costs 8 from 1.33 (held to both apiservers: test_cel_cost_truth.py).
COSTED_BY_MINOR = field_crd(
    {
        "type": "object",
        "properties": {"short": {"type": "string", "maxLength": 10}},
        "x-kubernetes-validations": [{"rule": "dyn(self.short).matches('^a')"}],
    }
)


@pytest.mark.parametrize(("version", "refused"), [((1, 32), True), ((1, 33), False)])
def test_the_chart_crds_rules_are_costed_as_the_clusters_minor_costs_them(
    tmp_path: Path, version: tuple[int, int], refused: bool
) -> None:
    bundle = tmp_path / "crds.yaml"
    bundle.write_text(yaml.safe_dump(COSTED_BY_MINOR))
    request = hook_run.Request(
        prepare(Inputs(crds=str(bundle))), "pre-upgrade", in_helm=False, evidence_limit=0
    )
    cluster = Cluster(version, {NAME: PLAIN})
    if not refused:
        assert isinstance(hook_run.run(request, cluster), hook_run.Judged)  # type: ignore[arg-type]
        return
    with pytest.raises(LoadError) as raised:
        hook_run.run(request, cluster)  # type: ignore[arg-type]
    assert "the apiserver of Kubernetes 1.32 refuses this CRD: spec.field" in str(raised.value)
    assert "estimated rule cost exceeds budget" in str(raised.value)
