"""A throw-away cluster to try upgrade-guard on by hand: ``tools/cluster.sh`` builds what is
missing and runs this (``PYTHONPATH=tools .venv/bin/python -m testenv``).

etcd + kube-apiserver on loopback, the fake kubelet for ``kubectl logs``, and the Job runner
for every Job of the cluster, so ``helm install``/``upgrade``/``rollback`` run their hook
Jobs: the image ``tools/image/build.sh`` built from this checkout under ``upgrade-guard:testenv``
and under the library chart's default image, ``testenv/host`` as this machine's root. Prints
the ``export`` line for KUBECONFIG and PATH and a line per Job; Ctrl-C or SIGTERM stops
everything and removes its files.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
from pathlib import Path

import yaml

from .binaries import BUILD_COMMAND, find_binaries
from .controlplane import RESTRICTED_USERS, ControlPlane
from .jobrunner import JobRunner
from .kubelet import FakeKubelet
from .sandbox import GUARD_IMAGE, HOST_IMAGE, Image, built_guard_image

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
LIBRARY_VALUES = REPO / "chart-snippets" / "upgrade-guard" / "values.yaml"


def chart_default_image() -> str:
    """The image the library chart's hook Job runs when no value overrides it."""
    image = yaml.safe_load(LIBRARY_VALUES.read_text())["image"]
    if image.get("digest"):
        return f"{image['repository']}@{image['digest']}"
    return f"{image['repository']}:{image['tag']}"


def say(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testenv", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, help="also copy the admin kubeconfig here")
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries.missing():
        print(f"missing {', '.join(binaries.missing())}: run {BUILD_COMMAND}", file=sys.stderr)
        return 1
    guard = built_guard_image()
    images: dict[str, Image] = {}
    if guard is None:
        say("no image built for this checkout (tools/image/build.sh): its Jobs will fail")
    else:
        images = {GUARD_IMAGE: guard, chart_default_image(): guard}
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with ControlPlane(binaries) as cp:
            assert cp.workdir is not None
            kubelet = FakeKubelet(cp).start()
            runner = JobRunner(cp, kubelet, cp.workdir / "jobs", images=images,
                               path_prepend=[VENV_BIN, binaries.bin_dir], every_job=True,
                               say=say)  # fmt: skip
            try:
                runner.start()
                kubeconfig = cp.admin_kubeconfig
                if args.kubeconfig:
                    shutil.copy(kubeconfig, args.kubeconfig)
                    kubeconfig = args.kubeconfig
                say(f"kube-apiserver {cp.server} ready in {cp.startup_seconds:.1f}s")
                for user in RESTRICTED_USERS:
                    say(f"kubeconfig for {user} (no RBAC rules): {cp.kubeconfig_for(user)}")
                sources = [f"{name} (this checkout's build)" for name in sorted(images)]
                sources.append(f"{HOST_IMAGE} (this machine's root, read-only)")
                say(f"Jobs run under bwrap, images: {', '.join(sources)}")
                say(f"export KUBECONFIG={kubeconfig} PATH={VENV_BIN}:{binaries.bin_dir}:$PATH")
                say("Ctrl-C to stop")
                signal.pause()
            finally:
                runner.stop()
                kubelet.stop()
    except KeyboardInterrupt:
        pass
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
