"""Every report format shows each path it names whole, on one line, however long, over
every release pair of the corpus (cert-manager v1.18.0 -> v1.19.0 once broke
spec.acme.solvers[].http01.gatewayHTTPRoute.podTemplate.spec.imagePullSecrets in the grouped
text report, piped)."""

from __future__ import annotations

import json

import pytest

from corpus import pairs, require_corpus
from upgrade_guard import engine
from upgrade_guard.findings import Outcome
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import load_documents
from upgrade_guard.report import REPORTERS, grouping


def shown_places(outcome: Outcome) -> list[str]:
    """What a report that groups repeated changes names: every single finding's path, and
    each group's first places (crd version path)."""
    groups, singles = grouping.grouped(outcome.findings)
    return [f.path for f in singles if f.path] + [p for g in groups for p in g.places()]


@pytest.mark.parametrize(("project", "old", "new"), pairs(), ids=lambda p: str(p))
def test_every_format_shows_each_path_whole(project: str, old: str, new: str) -> None:
    root = require_corpus() / project
    outcome = engine.compare_crds(
        crds_from(load_documents(str(root / old))), crds_from(load_documents(str(root / new)))
    )
    for output, render in REPORTERS.items():
        lines = render(outcome).splitlines()
        if output == "json":  # every finding, each path a JSON string
            places = [json.dumps(f.path) for f in outcome.findings if f.path]
        else:
            places = shown_places(outcome)
        cut = [place for place in places if not any(place in line for line in lines)]
        assert not cut, f"{output}: {len(cut)} paths not whole on one line, such as {cut[0]}"
