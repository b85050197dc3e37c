"""Both sides of a diff read, checked and compared: in one process, or shared by two.

A large diff is mostly reading and checking CRDs, and each file can be read and checked on its
own, so on two cores the files of both sides are shared out to this process and the one
worker of a process pool. Each reads and checks its share as ``diff_sides`` reads a whole
diff (the new side first, then the old side beside it) and compares the CRDs whose old and new
definitions both fell to it. The worker returns the heads of its CRDs (what is read of them
once they are compared), the problems it met with the file each is in, and its changes; this
process then puts both shares' heads in document order and compares the CRDs the shares
split, the removed and the added, asking the worker for those of its CRDs the comparison
reads whole (the split and the removed; an added CRD is only named). A file goes to a share
by the CRD name it seems to hold (the first ``name`` near its start), so that both
definitions of a CRD usually meet in one share whatever the files are called; a wrong guess
only moves that comparison to this process.

A problem is reported as one process reports it. ``diff_sides`` reports first a problem
reading the old side, then the new side's first problem (reading or checking, in document
order), then the old side's first in checking. A share stops where one process would stop
(reading the old side to its end), so the CRDs it returns are those one process would have
checked before its problem; each side is then walked in document order, where a name defined
twice is found, up to the first problem. tests/load/test_diffing.py holds both ways to one
result over the corpus, and to one message for each problem.
"""

from __future__ import annotations

import marshal
import os
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from upgrade_guard import engine, judging
from upgrade_guard.apiserver import crd_validation, minors
from upgrade_guard.crd import Crd, CrdHead, Source
from upgrade_guard.load.crds import check_at, crds_from, crds_of, defined_twice, diff_sides
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

# Below this much input (both sides), starting the worker and sending its results back cost
# about what sharing saves.
TWO_PROCESSES_FROM_BYTES = 16 * 1024 * 1024
# A YAML line "  name: x" or JSON '"name": "x"' after { or ,: the first is metadata.name in
# CRDs as generators and kubectl write them (only the share, not the result, depends on it).
_NAME_NEAR_START = re.compile(rb'(?m)(?:^[ ]*|[{,]\s*)"?name"?[ ]*:[ ]*"?([-.\w]+)')
_HEAD_BYTES = 4096
# The worker's share, in the worker (empty in this process).
_WORKER_KEEPS: list[_Loaded] = []


@dataclass(frozen=True)
class Compared:
    """Both sides' CRD heads by name, in document order, and the changes between them."""

    before: dict[str, CrdHead]
    after: dict[str, CrdHead]
    changes: judging.Changes


def read_and_compare(
    old: str, new: str, max_bytes: int, policy: Policy, minor: minors.Minor = minors.NEWEST
) -> Compared:
    """``diff_sides`` and ``engine.changes_between`` of the two arguments; a LoadError names
    the first problem, as ``diff_sides`` would, then one the apiserver of ``minor`` refuses
    in the new side beside the old (``check_at``)."""
    files = _files_to_share(old, new, max_bytes)
    if files is None:
        before, after = diff_sides(
            load_documents(old, max_bytes), load_documents(new, max_bytes), minor
        )
        check_at(after, before, minor)
        changes = engine.changes_between(before, after, policy)
        return Compared(_heads(before.values()), _heads(after.values()), changes)
    compared = _read_and_compare_shared(files, max_bytes, policy, minor)
    if minor < minors.NEWEST and any(minors.mentions(f.path.read_bytes()) for f in files.new):
        # The shares keep heads only: both sides are read again (their CRDs checked already)
        # where a rule of the new side may use a library that minor may lack.
        sides = [crds_from(load_documents(side, max_bytes), validate=False) for side in (old, new)]
        check_at(sides[1], sides[0], minor)
    return compared


def _read_and_compare_shared(
    files: _Files, max_bytes: int, policy: Policy, minor: minors.Minor
) -> Compared:
    """Both sides shared by this process and the worker (the module's documentation)."""
    # Imported here: a diff too small to share, the usual one, does without them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Before the worker forks, which then shares that code with this process rather than
    # importing its own (time and memory): an input this large holds CEL rules.
    crd_validation.import_rule_checks()
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))

    def their_whole(old: list[str], new: list[str]) -> _Whole:
        return _received_whole(pool.submit(_whole_to_send, old, new).result())

    try:
        sent = pool.submit(_loaded_to_send, files, max_bytes, policy, minor)
        own = _loaded(_share(files, worker=False), max_bytes, policy, minor)
        return _merged(own, _received(*sent.result()), files, policy, their_whole)
    finally:
        # Not waited for: the worker ends while this process goes on (the interpreter's exit
        # waits for it).
        pool.shutdown(wait=False)


class _File(NamedTuple):
    path: Path
    place: int  # in its side's reading order
    used: int  # bytes of its side's files before it, as listed


class _Files(NamedTuple):
    """Of both sides, or of a share of them."""

    old: list[_File]
    new: list[_File]


def _files_to_share(old: str, new: str, max_bytes: int) -> _Files | None:
    """Both sides' files, or None where one process does better (one core, standard input,
    little input) or where listing them fails or they are too large (one process says
    why)."""
    if STDIN in (old, new) or len(os.sched_getaffinity(0)) < 2:
        return None
    try:
        sides = [[(path, path.stat().st_size) for path in files_of(side)] for side in (old, new)]
    except (LoadError, OSError):
        return None
    sizes = [sum(size for _, size in files) for files in sides]
    if sum(sizes) < TWO_PROCESSES_FROM_BYTES or max(sizes) > max_bytes:
        return None
    return _Files(_listed(sides[0]), _listed(sides[1]))


def _listed(files: list[tuple[Path, int]]) -> list[_File]:
    listed, used = [], 0
    for place, (path, size) in enumerate(files):
        listed.append(_File(path, place, used))
        used += size
    return listed


def _share(files: _Files, worker: bool) -> _Files:
    """The files that fall to the worker (or to this process). Each of the two finds its own
    share, so neither waits for the other."""
    return _Files(*([f for f in side if _falls_to_worker(f.path) == worker] for side in files))


def _falls_to_worker(path: Path) -> bool:
    """Whether the worker reads path: decided by the name near its start, else by its name."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:  # reading it is then a problem, reported where one process meets it
        head = b""
    found = _NAME_NEAR_START.search(head)
    key = found.group(1) if found else path.name.encode()
    return bool(zlib.crc32(key) & 1)


class _Problem(NamedTuple):
    error: LoadError
    at: int  # the index of the file it is in


class _Problems(NamedTuple):
    """The first problem of each kind a share met, where ``diff_sides`` would look for it."""

    reading_old: _Problem | None
    new: _Problem | None  # reading or checking the new side
    checking_old: _Problem | None


@dataclass(frozen=True)
class _Loaded:
    """A share's CRDs in reading order, up to its problems, and the changes of the CRDs both
    of whose definitions it holds (none where it met a problem)."""

    before: list[Crd]
    after: list[Crd]
    problems: _Problems
    changes: judging.Changes


class _Side(NamedTuple):
    crds: list[Crd]
    checking: _Problem | None
    reading: _Problem | None


def _loaded(share: _Files, max_bytes: int, policy: Policy, minor: minors.Minor) -> _Loaded:
    """A share read and checked as ``diff_sides`` reads both sides: the new side first, up to
    its first problem; then the old side beside it, where it had none, to its first problem
    checking, and in any case read to its end or to its first problem reading."""
    passed = crd_validation.Passed(minor)
    after = _side(share.new, max_bytes, lambda document: crds_of((document,), True, None, passed))
    new_problem = after.reading or after.checking
    if new_problem is None:
        beside = {crd.name: crd for crd in after.crds}
        before = _side(
            share.old,
            max_bytes,
            lambda document: crds_of((document,), True, beside, passed, stored=True),
            read_on=True,
        )
    else:
        before = _side(share.old, max_bytes, None, read_on=True)
    problems = _Problems(before.reading, new_problem, before.checking)
    changes = judging.Changes(())
    if problems == (None, None, None):
        old, new = _by_name(before.crds), _by_name(after.crds)
        changes = engine.changes_between(old, new, policy, old.keys() & new.keys())
    return _Loaded(before.crds, after.crds, problems, changes)


def _side(
    files: list[_File],
    max_bytes: int,
    check: Callable[[Document], Iterator[Crd]] | None,
    read_on: bool = False,
) -> _Side:
    """The CRDs ``check`` finds in files' documents, up to its first problem; reading stops
    there too unless ``read_on``, and in any case at the first problem reading."""
    crds: list[Crd] = []
    checking = None
    for file in files:
        try:
            for name, data in read_files([file.path], max_bytes, file.used):
                for document in documents_of(name, data, max_bytes):
                    if check is None or checking is not None:
                        continue
                    try:
                        crds.extend(check(document))
                    except LoadError as error:
                        checking = _Problem(error, file.place)
                        if not read_on:
                            return _Side(crds, checking, None)
        except LoadError as error:
            return _Side(crds, checking, _Problem(error, file.place))
    return _Side(crds, checking, None)


def _by_name(crds: Iterable[Crd]) -> dict[str, Crd]:
    return {crd.name: crd for crd in crds}


def _heads(crds: Iterable[Crd]) -> dict[str, CrdHead]:
    return {crd.name: crd.head for crd in crds}


class _Headed(NamedTuple):
    """What the worker sends of its share first: its CRDs' heads in reading order, its
    problems and its changes."""

    before: list[CrdHead]
    after: list[CrdHead]
    problems: _Problems
    changes: judging.Changes


def _headed(loaded: _Loaded) -> _Headed:
    before, after = ([crd.head for crd in side] for side in (loaded.before, loaded.after))
    return _Headed(before, after, loaded.problems, loaded.changes)


_Whole = tuple[dict[str, Crd], dict[str, Crd]]


def _whole(loaded: _Loaded, old: Collection[str], new: Collection[str]) -> _Whole:
    """A share's CRDs of the names given, of each side."""
    return (
        {crd.name: crd for crd in loaded.before if crd.name in old},
        {crd.name: crd for crd in loaded.after if crd.name in new},
    )


def _loaded_to_send(
    files: _Files, max_bytes: int, policy: Policy, minor: minors.Minor
) -> tuple[bytes, _Problems, judging.Changes]:
    """In the worker: its share loaded, and its CRDs' heads as marshal's bytes (which read
    back faster than pickle's)."""
    loaded = _loaded(_share(files, worker=True), max_bytes, policy, minor)
    # Kept: this process may be asked for some of them whole (_whole_to_send), and its end
    # frees them at once rather than this function's return one object at a time, before
    # its result is sent.
    _WORKER_KEEPS.append(loaded)
    headed = _headed(loaded)
    heads = [
        [(head.name, head.source.file, head.source.document, head.annotations) for head in side]
        for side in (headed.before, headed.after)
    ]
    return marshal.dumps(heads), loaded.problems, loaded.changes


def _received(sent: bytes, problems: _Problems, changes: judging.Changes) -> _Headed:
    before, after = (
        [CrdHead(name, Source(file, doc), annotations) for name, file, doc, annotations in side]
        for side in marshal.loads(sent)
    )
    return _Headed(before, after, problems, changes)


def _whole_to_send(old: list[str], new: list[str]) -> bytes:
    """In the worker: the CRDs of its share of the names given, as marshal's bytes."""
    sides = _whole(_WORKER_KEEPS[-1], set(old), set(new))
    return marshal.dumps(
        [[(crd.raw, crd.source.file, crd.source.document) for crd in s.values()] for s in sides]
    )


def _received_whole(sent: bytes) -> _Whole:
    old, new = (
        _by_name(Crd(raw, Source(file, document)) for raw, file, document in side)
        for side in marshal.loads(sent)
    )
    return old, new


def _merged(
    own: _Loaded,
    theirs: _Headed,
    files: _Files,
    policy: Policy,
    their_whole: Callable[[list[str], list[str]], _Whole],
) -> Compared:
    """Both shares as one process reads and compares both sides whole. Neither share
    compared the CRDs they split, the removed and the added (a name in both shares is
    defined twice, and raised): they are compared here, with this process's CRDs of them
    and those of the worker's the comparison reads (the removed and the split), asked of it
    whole; an added CRD is only named."""
    shares = (_headed(own), theirs)
    reading_old = [share.problems.reading_old for share in shares if share.problems.reading_old]
    if reading_old:
        raise min(reading_old, key=lambda problem: problem.at).error
    old_files, new_files = ({str(file.path): file.place for file in side} for side in files)
    after = _in_order([(share.after, share.problems.new) for share in shares], new_files)
    before = _in_order([(share.before, share.problems.checking_old) for share in shares], old_files)
    compared = own.changes.merged(theirs.changes)
    rest = (before.keys() | after.keys()) - compared.unchanged - compared.changed
    old, new = _whole(own, rest, rest)
    asked_old = [head.name for head in theirs.before if head.name in rest]
    asked_new = [head.name for head in theirs.after if head.name in rest and head.name in before]
    if asked_old or asked_new:
        their_old, their_new = their_whole(asked_old, asked_new)
        old.update(their_old)
        new.update(their_new)
    changes = compared.merged(engine.changes_between(old, new, policy, rest))
    return Compared(before, after, changes)


def _in_order(
    shares: Iterable[tuple[list[CrdHead], _Problem | None]], files: Mapping[str, int]
) -> dict[str, CrdHead]:
    """One side's CRD heads by name in document order; or the first problem one process
    meets reading them in that order: a name defined twice, or the first of the shares'
    problems (after the CRDs its share found in the same file before it)."""
    problems = [problem for _, problem in shares if problem is not None]
    first = min(problems, key=lambda problem: problem.at, default=None)
    crds: dict[str, CrdHead] = {}
    for crd in sorted(
        (crd for found, _ in shares for crd in found),
        key=lambda crd: (files[crd.source.file], crd.source.document),
    ):
        if first is not None and files[crd.source.file] > first.at:
            break
        if crd.name in crds:
            raise defined_twice(crd, crds[crd.name])
        crds[crd.name] = crd
    if first is not None:
        raise first.error
    return crds
