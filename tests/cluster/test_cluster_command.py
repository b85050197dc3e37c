"""``tools/cluster.sh``: the cluster a person tries upgrade-guard on by hand. Started as they
would start it, the example chart installed with the real helm and nothing else: the hook Job
runs from this checkout's image, and SIGTERM stops everything and removes its files."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
from pathlib import Path

from testenv import Image

REPO = Path(__file__).resolve().parents[2]


class Lines:
    """The command's stdout, line by line, read in a thread so a wait can time out."""

    def __init__(self, stream: object) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, start: str, timeout: float) -> str:
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no {start!r} line; so far:\n" + "\n".join(self.seen))
            self.seen.append(line)
            if line.startswith(start):
                return line


def test_helm_install_runs_the_hook_job_and_sigterm_cleans_up(
    guard_image: Image, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr"
    command = subprocess.Popen(
        [str(REPO / "tools" / "cluster.sh")],
        stdout=subprocess.PIPE,
        stderr=stderr.open("w"),
        text=True,
        start_new_session=True,
    )
    try:
        lines = Lines(command.stdout)
        # It sets up .venv and builds what is missing first: minutes when pyproject.toml or
        # hook/ changed since (tools/test.sh has done both before pytest).
        export = lines.until("export KUBECONFIG=", timeout=900)
        exported = dict(word.split("=", 1) for word in export.split()[1:])
        kubeconfig = Path(exported["KUBECONFIG"])
        env = {
            **os.environ,
            "KUBECONFIG": str(kubeconfig),
            "PATH": exported["PATH"].replace("$PATH", os.environ["PATH"]),
            "HELM_CACHE_HOME": str(tmp_path / "cache"),
            "HELM_CONFIG_HOME": str(tmp_path / "config"),
            "HELM_DATA_HOME": str(tmp_path / "data"),
        }
        install = subprocess.run(
            ["helm", "install", "rel", str(REPO / "chart-snippets/example/1.0.0"),
             "-n", "demo", "--create-namespace", "--timeout", "120s"],
            env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert install.returncode == 0, install.stdout + install.stderr
        assert lines.until("job demo/rel-upgrade-guard: ", timeout=10).endswith(": started")
        done = lines.until("job demo/rel-upgrade-guard: ", timeout=10)
        assert done == "job demo/rel-upgrade-guard: Complete, exit code 0, 1 pod"
        workdir = kubeconfig.parents[1]
        assert workdir.is_dir()

        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=60) == 0
        assert lines.until("stopped", timeout=10) == "stopped"
        assert not workdir.exists()
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n--- stderr\n{stderr.read_text()[-3000:]}") from None
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
            command.wait()


def test_the_example_shows_helm_upgrade_refused_by_the_hook_and_diff_beside_it(
    guard_image: Image,
) -> None:
    """The README's ``tools/example.sh --cluster``: its own check passes (exit 0) only when
    the hook refused the upgrade and ``diff`` refused the same change."""
    result = subprocess.run(
        [str(REPO / "tools" / "example.sh"), "--cluster"],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    upgrade = result.stdout.split("$ helm upgrade rel chart-snippets/example/3.0.0", 1)[1]
    assert "upgrade-guard REFUSED: pre-upgrade of 1 CRD; 1 error" in upgrade
    assert "evidence: 1 of 1 backups affected: example/nightly" in upgrade
    offline = upgrade.split("$ upgrade-guard diff", 1)[1]
    assert "error   UG202 required-added  v1 spec.target" in offline
    assert result.stdout.endswith(
        "helm upgrade: exit code 1; upgrade-guard diff: exit code 1 (1 refused)\n"
    )
