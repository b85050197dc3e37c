"""Every way out a refusal prints, typed as printed (the chart, the flags given and the
entries accepted filled in) with the real helm against the real apiserver, on the example
chart, until the next run passes: a refused install, a refused rollback."""

from __future__ import annotations

import json
import re

from test_chart_snippets import (
    EXAMPLE,
    GUARD_VALUES,
    fresh_install,
    helm_status,
    show,
    without_the_example_crd,
)
from ways_out import entries, printed, typed

from testenv import Cluster, Image, JobRunner, ToolRunner


def test_a_refused_install_passes_by_the_command_it_prints(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    shell: ToolRunner,
    guard_image: Image,
) -> None:
    """An install with the 1.0.0 controller image under chart 3.0.0: refused (UG602). Helm
    keeps the release, failed, and `helm install` will not take its name again; the printed
    command upgrades it, keeping the install's values, with the paired image."""
    without_the_example_crd(cluster)
    guard = job_runner.expect(namespace, "rel-upgrade-guard")
    chart = str(EXAMPLE / "3.0.0")
    flags = (*GUARD_VALUES, "--set", "image.tag=1.0.0")
    install = helm("install", "rel", chart, "-n", namespace, *flags)
    assert install.returncode != 0, show(install)
    log = guard.wait(1, timeout=60).log
    assert log.startswith("upgrade-guard REFUSED: pre-install"), log
    again = helm("install", "rel", chart, "-n", namespace, *flags)
    assert "cannot reuse a name that is still in use" in again.stderr, show(again)

    command = printed(log, "  now: ", under="error UG602 ")
    assert command == (
        f"helm upgrade --install rel -n {namespace} CHART --reset-then-reuse-values"
        " [your flags] --set image.tag=2.0.0"
    )
    done = shell(typed(command, chart, flags))
    assert done.returncode == 0, show(done)
    assert guard.wait(2, timeout=60).succeeded
    assert helm_status(helm, namespace) == "deployed"
    values = json.loads(helm("get", "values", "rel", "-n", namespace, "-o", "json").stdout)
    assert values["image"] == {"tag": "2.0.0"}, values


def test_a_refused_rollback_passes_by_the_accept_command_it_prints(
    cluster: Cluster,
    namespace: str,
    job_runner: JobRunner,
    helm: ToolRunner,
    shell: ToolRunner,
    guard_image: Image,
) -> None:
    """A rollback from 3.0.0 to 2.0.0 goes below the live schema version: refused (UG603).
    A rollback takes no values, so no acceptance either: the printed way out of the
    rollback, then the printed accept command (an upgrade to 2.0.0 with revision 1's values
    and the acceptance) leave the release at 2.0.0, deployed, the acceptance said."""
    guard = fresh_install(cluster, namespace, job_runner, helm, "2.0.0")
    upgrade = helm("upgrade", "rel", str(EXAMPLE / "3.0.0"), "-n", namespace, *GUARD_VALUES)
    assert upgrade.returncode == 0, show(upgrade)
    assert guard.wait(2, timeout=60).succeeded
    rollback = helm("rollback", "rel", "1", "-n", namespace)
    assert rollback.returncode != 0, show(rollback)
    log = guard.wait(3, timeout=60).log
    assert "error UG603 schema-below-live backups.example.io" in log, log
    accepted = entries(log)
    assert accepted == ['{"chart":"2.0.0","code":"UG603","crd":"backups.example.io"}'], log

    deleted = shell(printed(log, "way out of this rollback: "))
    assert deleted.returncode == 0, show(deleted)
    assert helm_status(helm, namespace) == "deployed"
    command = printed(log, "each refusal: ")
    assert command.startswith(f"helm get values rel -n {namespace} --revision 1 "), command
    done = shell(typed(command, str(EXAMPLE / "2.0.0"), accepted=accepted))
    passed = guard.wait(4, timeout=60)
    assert passed.log.startswith(
        "upgrade-guard SAFE with 1 finding ACCEPTED by the cluster admin: pre-upgrade"
    ), passed.log
    # The hook accepts, and says that the release's admission policy, in the apiserver, asks
    # for its own acceptance on the live CRD, naming the schema it goes to, as the policy's
    # refusal does: given, the same command passes.
    assert done.returncode != 0, show(done)
    policy = re.search(
        r"To make exactly this change on purpose: (kubectl annotate [^,]+),", done.stderr
    )
    assert policy is not None, show(done)
    told = printed(passed.log, "  admission policy: ")
    assert told == policy.group(1), (told, policy.group(1))
    assert told.startswith(
        "kubectl annotate crd backups.example.io upgrade-guard.io/accept-schema-digest=sha256:"
    ), told
    annotated = shell(told)
    assert annotated.returncode == 0, show(annotated)
    done = shell(typed(command, str(EXAMPLE / "2.0.0"), accepted=accepted))
    assert done.returncode == 0, show(done)
    assert guard.wait(5, timeout=60).succeeded
    last = json.loads(helm("history", "rel", "-n", namespace, "-o", "json").stdout)[-1]
    assert (last["status"], last["chart"]) == ("deployed", "example-operator-2.0.0"), last
