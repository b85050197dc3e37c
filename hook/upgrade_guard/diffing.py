"""Both sides of a diff read, checked and compared: in one process, or shared by two.

A large diff is mostly reading and checking CRDs, and each file can be read and checked on its
own, so on two cores the files of both sides are shared out to two processes (the parent and
a fork). Each reads and checks its share and compares the CRDs whose old and new definitions
both fell to it, before it waits for the other. The child then sends the parent the metadata
and source of each of its CRDs (what a policy's scoping and the report's locations read), the
CRDs whose other side the parent holds, and its changes; the parent compares those pairs and
the removed CRDs. A file goes to a process by the CRD name it seems to hold (the first
``name`` near its start), so that both definitions of a CRD usually meet in one process
whatever the files are called; a wrong guess only costs sending that CRD over.

Only a diff without problems runs in two. When either process meets one (a file it cannot
read, a CRD the apiserver refuses, a name defined in both shares) or anything else goes wrong,
the diff runs again in one process, which reports the problem exactly as it always does. The
result is the same either way; tests/load/test_diffing.py holds this over the corpus.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from upgrade_guard import engine, judging
from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.crds import API_VERSION, diff_sides
from upgrade_guard.load.documents import (
    STDIN,
    Document,
    LoadError,
    documents_of,
    files_of,
    load_documents,
    read_files,
)
from upgrade_guard.policy import Policy

# Below this much input (both sides), forking and sending costs about what it saves (the
# corpus' kyverno and prometheus-operator pairs, 3 to 6 MB each, gain nothing from it).
TWO_PROCESSES_FROM_BYTES = 16 * 1024 * 1024
# A YAML line "  name: x" or JSON '"name": "x"' after { or ,: the first is metadata.name in
# CRDs as generators and kubectl write them (only the share, not the result, depends on it).
_NAME_NEAR_START = re.compile(rb'(?m)(?:^[ ]*|[{,]\s*)"?name"?[ ]*:[ ]*"?([-.\w]+)')
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class Compared:
    """Both sides' CRDs by name, in document order, and the changes between them."""

    before: dict[str, Crd]
    after: dict[str, Crd]
    changes: judging.Changes


def read_and_compare(old: str, new: str, max_bytes: int, policy: Policy) -> Compared:
    """``diff_sides`` and ``engine.changes_between`` of the two arguments; a LoadError names
    the first problem, as ``diff_sides`` would."""
    inputs = _inputs(old, new, max_bytes)
    if inputs is not None:
        compared = _in_two_processes(inputs, policy)
        if compared is not None:
            return compared
    before, after = diff_sides(load_documents(old, max_bytes), load_documents(new, max_bytes))
    return Compared(before, after, engine.changes_between(before, after, policy))


@dataclass(frozen=True)
class _Inputs:
    """Both sides' files in reading order, each with its size when listed."""

    old: list[tuple[Path, int]]
    new: list[tuple[Path, int]]
    max_bytes: int

    def order(self) -> dict[str, int]:
        """Each file's place in reading order."""
        return {str(path): index for index, (path, _) in enumerate(self.old + self.new)}

    def sides(self, in_child: bool) -> tuple[dict[str, Crd], dict[str, Crd]]:
        """The CRDs of the files that fall to this process. Each process sorts the files out
        itself, so neither waits for the other; a file grown since it was listed is a
        problem (so one process reads it all again)."""
        return diff_sides(self._documents(self.old, in_child), self._documents(self.new, in_child))

    def _documents(self, files: list[tuple[Path, int]], in_child: bool) -> Iterator[Document]:
        mine = [(path, size) for path, size in files if _falls_to_child(path) == in_child]
        budget = sum(size for _, size in mine)
        for name, data in read_files([path for path, _ in mine], budget):
            yield from documents_of(name, data, self.max_bytes)


def _inputs(old: str, new: str, max_bytes: int) -> _Inputs | None:
    """The files to share out, or None where one process does better (one core, standard
    input, little input) or where reading fails anyway (one process says why)."""
    if STDIN in (old, new) or not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2:
        return None
    try:
        sides = [[(path, path.stat().st_size) for path in files_of(side)] for side in (old, new)]
    except (LoadError, OSError):
        return None
    sizes = [sum(size for _, size in files) for files in sides]
    if sum(sizes) < TWO_PROCESSES_FROM_BYTES or max(sizes) > max_bytes:
        return None
    return _Inputs(sides[0], sides[1], max_bytes)


def _falls_to_child(path: Path) -> bool:
    """Whether the child reads path: decided by the name near its start, else by its name."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        head = os.read(descriptor, _HEAD_BYTES)
    finally:
        os.close(descriptor)
    found = _NAME_NEAR_START.search(head)
    key = found.group(1) if found else path.name.encode()
    return bool(zlib.crc32(key) & 1)


def _send(stream: IO[bytes], message: object) -> None:
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    return pickle.load(stream)


def _headers(crds: Mapping[str, Crd]) -> dict[str, tuple[Any, Source]]:
    return {name: (crd.raw.get("metadata"), crd.source) for name, crd in crds.items()}


def _stand_in(metadata: Any, source: Source) -> Crd:
    """A CRD the child holds, as the parent keeps it: metadata and source only (no spec, so
    any use beyond those fails loudly)."""
    return Crd(
        {"apiVersion": API_VERSION, "kind": "CustomResourceDefinition", "metadata": metadata},
        source,
    )


def _child(inputs: _Inputs, to_parent: IO[bytes], from_parent: IO[bytes], policy: Policy) -> None:
    try:
        before, after = inputs.sides(in_child=True)
    except (LoadError, OSError):
        _send(to_parent, None)
        return
    # Compared before anything is sent: a send blocks until the parent reads it.
    changes = engine.changes_between(before, after, policy, before.keys() & after.keys())
    _send(to_parent, (_headers(before), _headers(after)))
    wanted = _receive(from_parent)
    if wanted is None:
        return
    old_wanted, new_wanted = wanted
    _send(
        to_parent,
        (
            [(before[name].raw, before[name].source) for name in old_wanted],
            [(after[name].raw, after[name].source) for name in new_wanted],
        ),
    )
    _send(to_parent, changes)


def _in_two_processes(inputs: _Inputs, policy: Policy) -> Compared | None:
    """The diff shared by two processes, or None if it has to run in one."""
    to_parent_read, to_parent_write = os.pipe()
    from_parent_read, from_parent_write = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller
        status = 0
        try:
            os.close(to_parent_read)
            os.close(from_parent_write)
            with open(to_parent_write, "wb") as out, open(from_parent_read, "rb") as back:
                _child(inputs, out, back, policy)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(to_parent_write)
    os.close(from_parent_read)
    try:
        with open(to_parent_read, "rb") as from_child, open(from_parent_write, "wb") as to_child:
            return _parent(inputs, from_child, to_child, policy)
    except (LoadError, OSError, EOFError, pickle.UnpicklingError):
        return None
    finally:
        os.kill(pid, signal.SIGKILL)  # unreaped, so never gone: stops a child that is not done
        os.waitpid(pid, 0)


def _parent(
    inputs: _Inputs, from_child: IO[bytes], to_child: IO[bytes], policy: Policy
) -> Compared | None:
    before, after = inputs.sides(in_child=False)
    changes = engine.changes_between(before, after, policy, before.keys() & after.keys())
    headers = _receive(from_child)
    if headers is None:
        return None
    child_old, child_new = headers
    if not (before.keys().isdisjoint(child_old) and after.keys().isdisjoint(child_new)):
        _send(to_child, None)  # a name defined twice: one process says where
        return None
    old_wanted = [name for name in child_old if name in after]
    new_wanted = [name for name in child_new if name in before]
    _send(to_child, (old_wanted, new_wanted))
    shipped_old, shipped_new = _receive(from_child)
    order = inputs.order()
    old_view = _merged(before, child_old, shipped_old, order)
    new_view = _merged(after, child_new, shipped_new, order)
    removed = [name for name in old_view if name not in new_view]
    split = engine.changes_between(old_view, new_view, policy, old_wanted + new_wanted + removed)
    child_changes: judging.Changes = _receive(from_child)
    return Compared(old_view, new_view, changes.merged(split).merged(child_changes))


def _merged(
    own: dict[str, Crd],
    child: Mapping[str, tuple[Any, Source]],
    shipped: Iterable[tuple[Any, Source]],
    order: Mapping[str, int],
) -> dict[str, Crd]:
    """One side's CRDs: the parent's, the child's it was sent whole, stand-ins for the rest;
    in document order, as one process would have them."""
    crds = dict(own)
    crds.update((name, _stand_in(metadata, source)) for name, (metadata, source) in child.items())
    for raw, source in shipped:
        crd = Crd(raw, source)
        crds[crd.name] = crd
    return dict(
        sorted(crds.items(), key=lambda item: (order[item[1].source.file], item[1].source.document))
    )
