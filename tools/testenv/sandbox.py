"""Containers for the Job runner: an image's root filesystem under bubblewrap.

:class:`Image` is an image as the runtime needs it: the unpacked root filesystem and the
image config (entrypoint, cmd, env, user, working dir), read from the OCI archive that
``tools/image/build.sh`` writes. :func:`host_image` is the stand-in for test Jobs that need
the test machine's tools (``sh``, ``kubectl``): the host's ``/``, read-only.

:func:`bwrap_argv` builds the ``bwrap`` command line for one container: user, PID, IPC and
UTS namespaces (the network is shared, so the apiserver on loopback is reachable), the root
filesystem read-only, ``/proc``, ``/dev``, and each mount bound at its real path. A mount
point missing from the image is made the way a container runtime makes it on a read-only
root: its nearest existing parent directory becomes a tmpfs holding binds of the original
entries plus the new mount point, remounted read-only. The uid and gid are those of the
user namespace bwrap creates (outside it the process keeps the caller's uid), so files the
image owns appear owned by that uid; read-only mounts and the read-only root hold all the
same. A writable root filesystem (``readOnlyRootFilesystem`` unset or false) is a tmpfs on
``/tmp`` and ``/var/tmp``; writes elsewhere fail as on a read-only root.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HOST_IMAGE = "testenv/host"
GUARD_IMAGE = "upgrade-guard:testenv"  # the image tools/image/build.sh built from this checkout
ARCHIVE = "upgrade-guard.oci.tar"
IMAGE_BUILD = Path(__file__).resolve().parents[1] / "image" / "build.sh"


class SandboxError(Exception):
    """The container cannot be set up (bad image, unsupported mount)."""


@dataclass(frozen=True)
class Image:
    rootfs: Path
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    user: str = ""  # "uid[:gid]" as the image config says; "" is root
    working_dir: str = ""

    @classmethod
    def from_build(cls, directory: Path) -> Image:
        """The image ``tools/image/build.sh`` left in ``directory``: its OCI archive's config
        and the root filesystem unpacked beside it (``bundle/rootfs``)."""
        with tarfile.open(directory / ARCHIVE) as archive:

            def blob(name: str) -> dict[str, object]:
                member = archive.extractfile(name.replace("sha256:", "./blobs/sha256/"))
                if member is None:
                    raise SandboxError(f"{directory / ARCHIVE}: no {name}")
                loaded: dict[str, object] = json.load(io.TextIOWrapper(member))
                return loaded

            index = blob("./index.json")
            manifest = blob(index["manifests"][0]["digest"])  # type: ignore[index]
            config = blob(manifest["config"]["digest"])["config"]  # type: ignore[index]
        assert isinstance(config, dict)
        env = dict(e.split("=", 1) for e in config.get("Env") or [])
        return cls(
            rootfs=directory / "bundle" / "rootfs",
            entrypoint=list(config.get("Entrypoint") or []),
            cmd=list(config.get("Cmd") or []),
            env=env,
            user=str(config.get("User") or ""),
            working_dir=str(config.get("WorkingDir") or ""),
        )


def built_guard_image() -> Image | None:
    """The image ``tools/image/build.sh`` built from this checkout; None when it is not built
    for the checkout as it is now."""
    found = subprocess.run([str(IMAGE_BUILD), "--print-dir"], capture_output=True, text=True)
    return Image.from_build(Path(found.stdout.strip())) if found.returncode == 0 else None


def host_image(path_prepend: Sequence[Path]) -> Image:
    """The test machine's own root, read-only, with ``path_prepend`` first on PATH."""
    path = os.pathsep.join([*map(str, path_prepend), os.environ.get("PATH", "/usr/bin:/bin")])
    return Image(rootfs=Path("/"), env={"PATH": path})


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str  # path in the container
    read_only: bool


def resolve(rootfs: Path, path: str) -> str:
    """``path`` inside the container with the image's symlinks followed (an absolute link
    target is relative to the image's root, not the host's)."""
    pending = [p for p in path.split("/") if p]
    resolved: list[str] = []
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == ".":
            continue
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        candidate = rootfs.joinpath(*resolved, part)
        if candidate.is_symlink():
            hops += 1
            if hops > 40:
                raise SandboxError(f"{path}: too many levels of symbolic links in the image")
            target = os.readlink(candidate)
            if target.startswith("/"):
                resolved = []
            pending = [p for p in target.split("/") if p] + pending
            continue
        resolved.append(part)
    return "/" + "/".join(resolved)


def _missing_parent(rootfs: Path, target: str) -> str | None:
    """The deepest existing directory above the first component of ``target`` that the
    image lacks, or None when the image has the whole path."""
    parts = [p for p in target.split("/") if p]
    for depth in range(len(parts)):
        if not rootfs.joinpath(*parts[: depth + 1]).exists():
            return "/" + "/".join(parts[:depth])
    return None


def bwrap_argv(
    image: Image,
    argv: Sequence[str],
    mounts: Sequence[Mount],
    *,
    uid: int,
    gid: int,
    hostname: str,
    working_dir: str,
    read_only_root: bool,
) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bwrap not found: apt-get install bubblewrap")
    rootfs = image.rootfs
    scratch = [] if read_only_root else [resolve(rootfs, "/tmp"), resolve(rootfs, "/var/tmp")]
    resolved = [(m, resolve(rootfs, m.target)) for m in mounts]
    kernel_dirs = ("/proc", "/dev", *scratch)
    splits = sorted(
        {
            parent
            for _, target in resolved
            if not any(target == d or target.startswith(d + "/") for d in kernel_dirs)
            and (parent := _missing_parent(rootfs, target)) is not None
        },
        key=lambda d: d.count("/") if d != "/" else 0,
    )
    args = [bwrap, "--die-with-parent", "--unshare-user", "--uid", str(uid), "--gid", str(gid),
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", hostname]  # fmt: skip
    if "/" not in splits:
        args += ["--ro-bind", str(rootfs), "/"]
    for directory in splits:
        if directory != "/":
            args += ["--tmpfs", directory]
        for entry in sorted(rootfs.joinpath(directory.lstrip("/")).iterdir()):
            inside = f"{directory.rstrip('/')}/{entry.name}"
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry), inside]
            else:
                args += ["--ro-bind", str(entry), inside]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for directory in scratch:
        args += ["--tmpfs", directory]
    for mount, target in resolved:
        args += ["--ro-bind" if mount.read_only else "--bind", str(mount.source), target]
    for directory in splits:
        args += ["--remount-ro", directory]
    return [*args, "--chdir", working_dir or "/", "--", *argv]
