"""A pass is visible: the library's guard Job carries `helm.sh/hook-output-log-policy:
hook-succeeded,hook-failed`, so the real helm (v4) prints the guard's report in its own output
when the upgrade goes on too, read from the Pod's log before Helm deletes the Job
(`hook-succeeded`). Shown on the example chart adopted by a release that ran no guard (the
first-adoption note, UG606), a change its stored objects survive (a warning), an upgrade with
nothing to report (the verdict, which says the guard ran and what it judged), and a refusal,
whose Job stays for `kubectl logs`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml
from test_chart_snippets import EXAMPLE, GUARD_VALUES, NO_POLICY, show, without_the_example_crd

from testenv import Cluster, Image, JobRunner, ToolRunner

# Helm 4 prints a hook's log through its logger: one line, the log's newlines escaped.
HOOK_LOG = re.compile(r'^level=INFO msg=(".*")$')


def hook_logs(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The hook logs helm printed, unescaped (Go quotes them as JSON does for this text),
    each as Go's logger keeps it: without the last newline."""
    found = (HOOK_LOG.match(line) for line in result.stderr.splitlines())
    return [json.loads(match.group(1)) for match in found if match]


def before_adoption(to: Path) -> Path:
    """Release 1.0.0 as it was before the chart adopted the guard: no hook, no annotations."""
    shutil.copytree(EXAMPLE / "1.0.0", to, symlinks=True)
    shutil.rmtree(to / "charts")
    shutil.rmtree(to / "upgrade-guard")
    (to / "templates" / "upgrade-guard.yaml").unlink()
    metadata = yaml.safe_load((to / "Chart.yaml").read_text())
    del metadata["dependencies"], metadata["annotations"]
    (to / "Chart.yaml").write_text(yaml.safe_dump(metadata))
    crd = to / "templates" / "crds" / "backups.yaml"
    lines = crd.read_text().splitlines(keepends=True)
    crd.write_text("".join(line for line in lines if "upgrade-guard.io/" not in line))
    return to


def test_helm_prints_the_report_of_a_passing_guard(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    kubectl: ToolRunner,
    guard_image: Image,
    tmp_path: Path,
) -> None:
    without_the_example_crd(cluster)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    old = before_adoption(tmp_path / "0.9.0")
    installed = helm("install", "rel", str(old), "-n", namespace)
    assert installed.returncode == 0, show(installed)
    assert hook_logs(installed) == [], show(installed)  # no guard yet

    # The first release with the guard: the live CRD carries no schema version (UG606).
    adopted = helm("upgrade", "rel", str(EXAMPLE / "1.0.0"), "-n", namespace, *GUARD_VALUES)
    assert adopted.returncode == 0, show(adopted)
    first = guard.wait(1, timeout=60)
    assert first.succeeded and "info UG606 first-adoption" in first.log, first.log
    assert hook_logs(adopted) == [first.log.rstrip()], show(adopted)
    assert "STATUS: deployed" in adopted.stdout and "UG606" not in adopted.stdout
    # Printed before Helm deleted the Job (hook-succeeded), which took its log with it.
    job = f"/apis/batch/v1/namespaces/{namespace}/jobs/rel-upgrade-guard"
    assert cluster.admin.get_or_none(job) is None

    # Release 2 adds an optional field: nothing to report. The verdict still says that the
    # guard ran and on what, and the last line what it read.
    clean = helm("upgrade", "rel", str(EXAMPLE / "2.0.0"), "-n", namespace, *GUARD_VALUES)
    assert clean.returncode == 0, show(clean)
    second = guard.wait(2, timeout=60)
    assert second.succeeded
    assert hook_logs(clean) == [second.log.rstrip()], show(clean)
    verdict, read = second.log.splitlines()
    assert verdict == "upgrade-guard SAFE: pre-upgrade of 1 CRD; no findings", second.log
    assert read.startswith("read 1 live of 1 chart CRDs from Kubernetes 1.35 in "), second.log

    # Release 3 makes spec.target required; no Backup is stored, so it passes with a warning.
    # Helm's stdout (here its JSON) stays the release alone: the report is on stderr.
    warned = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES,
                  *NO_POLICY, "-o", "json")  # fmt: skip
    assert warned.returncode == 0, show(warned)
    third = guard.wait(3, timeout=60)
    assert third.succeeded and "warning UG" in third.log, third.log
    assert "spec.target" in third.log and "no stored object affected" in third.log, third.log
    assert hook_logs(warned) == [third.log.rstrip()], show(warned)
    assert json.loads(warned.stdout)["info"]["status"] == "deployed"

    # A refusal (release 2's schema is below the live one's, UG603) prints as before, and the
    # Job stays (no hook-failed delete policy): kubectl logs reads the report, lines intact.
    down = helm("upgrade", "rel", str(EXAMPLE / "2.0.0"), "-n", namespace, *GUARD_VALUES)
    assert down.returncode != 0, show(down)
    fourth = guard.wait(4, timeout=60)
    assert not fourth.succeeded and "UG603" in fourth.log, fourth.log
    assert hook_logs(down) == [fourth.log.rstrip()], show(down)
    logs = kubectl("logs", "-n", namespace, "job/rel-upgrade-guard")
    assert logs.returncode == 0 and logs.stdout == fourth.log, logs
