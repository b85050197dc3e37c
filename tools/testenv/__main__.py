"""Start a throw-away control plane by hand: ``PYTHONPATH=tools .venv/bin/python -m testenv``.

Prints the admin kubeconfig path and an ``export`` line, then waits for Ctrl-C and tears
everything down. Jobs are not run (use the pytest ``job_runner`` fixture for that).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
from pathlib import Path

from .binaries import BUILD_COMMAND, find_binaries
from .controlplane import RESTRICTED_USERS, ControlPlane
from .kubelet import FakeKubelet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testenv", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, help="also copy the admin kubeconfig here")
    args = parser.parse_args(argv)
    binaries = find_binaries()
    if binaries.missing():
        print(f"missing {', '.join(binaries.missing())}: run {BUILD_COMMAND}", file=sys.stderr)
        return 1
    with ControlPlane(binaries) as cp:
        kubelet = FakeKubelet(cp).start()
        kubeconfig = cp.admin_kubeconfig
        if args.kubeconfig:
            shutil.copy(kubeconfig, args.kubeconfig)
            kubeconfig = args.kubeconfig
        print(f"kube-apiserver {cp.server} ready in {cp.startup_seconds:.1f}s")
        for user in RESTRICTED_USERS:
            print(f"kubeconfig for {user} (no RBAC rules): {cp.kubeconfig_for(user)}")
        print(f"export KUBECONFIG={kubeconfig} PATH={binaries.bin_dir}:$PATH")
        print("Ctrl-C to stop", flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
        finally:
            kubelet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
