"""The commands a refusal prints for what the person ran, each beside the nearest other
operation (tests/cluster/test_ways_out.py types them against the real helm)."""

from __future__ import annotations

import pytest

from upgrade_guard.report.ways_out import APPLY, Asked, accepting, again, dropping_acceptances

HOOK = Asked(release="rel", namespace="ns", chart_version="3.0.0")
SETTING = "--set image.tag=3.0.0"

AGAIN = [
    ("hook upgrade: the new chart's defaults under the release's own values", HOOK,
     "helm upgrade rel -n ns CHART --reset-then-reuse-values [your flags] --set image.tag=3.0.0"),
    ("hook install: Helm keeps the refused install, so an upgrade of it", Asked(
        "install", "rel", "ns", "3.0.0"),
     "helm upgrade --install rel -n ns CHART --reset-then-reuse-values [your flags]"
     " --set image.tag=3.0.0"),
    ("hook rollback: no values taken, so an upgrade to its chart with its values", Asked(
        "rollback", "rel", "ns", "2.0.0", revision=1),
     "helm get values rel -n ns --revision 1 --output yaml > revision-1-values.yaml &&"
     " helm upgrade rel -n ns CHART --version 2.0.0 --values revision-1-values.yaml"
     " --set image.tag=3.0.0"),
    ("plugin upgrade: checked again, then helm run", Asked(
        "upgrade", "rel", "ns", "3.0.0", plugin=True),
     "helm guard upgrade rel -n ns CHART [your flags] --set image.tag=3.0.0 --run"),
    ("plugin rollback to an adopted revision: as the hook's, checked first", Asked(
        "rollback", "rel", "ns", "2.0.0", revision=1, plugin=True),
     "helm get values rel -n ns --revision 1 --output yaml > revision-1-values.yaml &&"
     " helm guard upgrade rel -n ns CHART --version 2.0.0 --values revision-1-values.yaml"
     " --set image.tag=3.0.0 --run"),
    ("plugin rollback to an unguarded revision: the rollback itself", Asked(
        "rollback", "rel", "ns", "2.0.0", revision=1, plugin=True, in_values=False),
     "helm guard rollback rel -n ns 1 --set image.tag=3.0.0 --run"),
    ("crds/ by kubectl: checked again, before the apply", Asked(
        APPLY, chart_version="1.19.0", plugin=True, in_values=False),
     "helm guard crds CHART --version 1.19.0 --set image.tag=3.0.0"),
    ("nothing known: placeholders", Asked(),
     "helm upgrade RELEASE CHART --reset-then-reuse-values [your flags] --set image.tag=3.0.0"),
]  # fmt: skip


@pytest.mark.parametrize(("asked", "command"), [c[1:] for c in AGAIN], ids=[c[0] for c in AGAIN])
def test_the_command_again_for_what_was_run(asked: Asked, command: str) -> None:
    assert again(asked, SETTING) == command


ACCEPTING = [
    ("an adopted chart takes acceptances in its values", HOOK,
     "`helm upgrade rel -n ns CHART --reset-then-reuse-values [your flags] --set-json"
     " 'upgrade-guard.accept=[ENTRY,...]'`"),
    ("a chart that did not adopt the guard: the plugin's --accept", Asked(
        "upgrade", "rel", "ns", "3.0.0", plugin=True, in_values=False),
     "`helm guard upgrade rel -n ns CHART [your flags] --accept 'ENTRY' --run`"
     " (--accept once per entry)"),
    ("crds/: --accept, with the chart version acceptances name", Asked(
        APPLY, chart_version="1.19.0", plugin=True, in_values=False),
     "`helm guard crds CHART --version 1.19.0 --accept 'ENTRY'` (--accept once per entry)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("asked", "command"), [c[1:] for c in ACCEPTING], ids=[c[0] for c in ACCEPTING]
)
def test_the_acceptances_go_where_the_chart_takes_them(asked: Asked, command: str) -> None:
    assert accepting(asked) == command


def test_dropping_acceptances_empties_the_value_or_leaves_out_the_option() -> None:
    assert dropping_acceptances(HOOK) == (
        "`helm upgrade rel -n ns CHART --reset-then-reuse-values [your flags] --set-json"
        " 'upgrade-guard.accept=[]'`"
    )
    plugin = Asked("upgrade", "rel", "ns", "3.0.0", plugin=True, in_values=False)
    assert dropping_acceptances(plugin) == (
        "`helm guard upgrade rel -n ns CHART [your flags] --run` (no --accept)"
    )
