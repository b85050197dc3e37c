"""Survey the role and webhook-configuration checks (issue 24 §3, §4) over the release
histories in ../shared: every project of the corpus (its files read whole, as `diff` reads a
rendered chart) and every chart in ../shared/charts, rendered by the real helm with its CRDs
on (`helm template rel CHART --set crds.enabled=true`, the chart copied to a scratch
directory first). For each release it counts the ClusterRoles, Roles and webhook
configurations, and those carrying a counter annotation; for each consecutive pair it prints
UG401's findings (the default policy: warnings) as `diff` would report them.

    .venv/bin/python tools/roles_webhooks_survey.py

UG402 needs a live cluster (a live webhook configuration above the chart's counter) and
verify-history's webhook counters need stamped configurations; the counts say where either
could apply.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tools"))

from corpus import CORPUS, tags  # noqa: E402
from testenv import find_binaries  # noqa: E402
from upgrade_guard import engine  # noqa: E402
from upgrade_guard.judging import judge  # noqa: E402
from upgrade_guard.load.rendered import read_manifests  # noqa: E402
from upgrade_guard.manifests import Manifests  # noqa: E402
from upgrade_guard.subjects import RoleSubject  # noqa: E402

CHARTS = CORPUS.parent / "charts"
PREFIX = "upgrade-guard.io/"


def counted(label: str, manifests: Manifests) -> None:
    kinds = [role.kind for role in manifests.roles.values()]
    stamped = [
        key
        for key, webhook in manifests.webhooks.items()
        if any(k.startswith(PREFIX) for k in webhook.annotations)
    ]
    print(
        f"{label}: {kinds.count('ClusterRole')} ClusterRoles, {kinds.count('Role')} Roles,"
        f" {len(manifests.webhooks)} webhook configurations, {len(stamped)} carrying a counter"
    )


def compared(label: str, before: Manifests, after: Manifests) -> int:
    outcome = judge(engine.role_changes(RoleSubject(after.roles, before.roles)))
    for finding in outcome.findings:
        print(f"  {label}: {finding.severity} {finding.code} {finding.crd}: {finding.message}")
    return len(outcome.findings)


def history(project: str, releases: list[tuple[str, Manifests]]) -> None:
    found = 0
    for (before_tag, before), (tag, after) in itertools.pairwise(releases):
        found += compared(f"{project} {before_tag} -> {tag}", before, after)
    print(f"{project}: {len(releases) - 1} pairs, {found} UG401 findings")


def rendered(helm: Path, chart: Path, scratch: Path) -> Path:
    copy = scratch / chart.name
    shutil.copytree(chart, copy)
    done = subprocess.run(
        [str(helm), "template", "rel", str(copy), "--set", "crds.enabled=true"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HELM_CACHE_HOME": str(scratch / "cache")},
    )
    out = scratch / f"{chart.name}.yaml"
    out.write_text(done.stdout)
    return out


def main() -> None:
    for project in sorted(p.name for p in CORPUS.iterdir() if p.is_dir()):
        releases = []
        for tag in tags(project):
            manifests = read_manifests(str(CORPUS / project / tag))
            counted(f"{project} {tag}", manifests)
            releases.append((tag, manifests))
        history(project, releases)
    helm = find_binaries().helm
    with tempfile.TemporaryDirectory(prefix="ug-survey-") as scratch:
        for chart in sorted(p for p in CHARTS.iterdir() if p.is_dir()):
            releases = []
            for version in sorted(v.name for v in chart.iterdir() if v.is_dir()):
                stream = rendered(helm, chart / version, Path(scratch))
                manifests = read_manifests(str(stream))
                counted(f"{chart.name} {version} (helm template)", manifests)
                releases.append((version, manifests))
            history(f"{chart.name} (helm template)", releases)


if __name__ == "__main__":
    main()
