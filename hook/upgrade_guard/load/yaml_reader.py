"""YAML read the way Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2), fast.

Kubernetes turns YAML into JSON with go-yaml v2 (YAML 1.1 scalars) and sigs.k8s.io/yaml; this
module gives the same plain dicts, lists and scalars. Where YAML libraries differ, Kubernetes
wins (each rule below is checked against helm's reader in tests/load):

- ``on``/``off``/``yes``/``no``/``y``/``n`` (any of their three casings) are booleans;
- integers are Go's ``strconv.ParseInt(s, 0, 64)`` (then ParseUint) after removing ``_``:
  ``010`` is 8, ``0o10`` and ``0x10`` and ``0b10`` are integers, ``08`` is the float 8.0;
- floats need no dot (``1e3`` is 1000.0), out-of-range ones (``1e400``) and base-60 numbers
  (``1:30``) stay strings, timestamps stay strings;
- the bare ``=`` is the string "=" (PyYAML's SafeLoader refuses its "value" tag);
- merge keys ``<<`` apply in order (a later key overrides a merged one and the other way
  round; in ``<<: [*a, *b]`` the first mapping wins; ``<<: *a`` naming a sequence is refused);
- mapping keys become strings as sigs.k8s.io/yaml makes them (``true``, ``1``, floats
  formatted as Go's float32 ``%g``); null keys, integer keys beyond int64 and ``.inf``/``.nan``
  values cannot become JSON and are errors, as in Kubernetes;
- explicit tags resolve as go-yaml v2 does (``!!int "010"`` is 8, ``!!str 010`` is "010",
  ``!!binary`` is decoded, a value that does not fit its tag is an error);
- the escape ``\\/`` (YAML 1.2, read by libyaml) is an error, as in go-yaml v2.

Most files take a fast path (rapidyaml, see fast_yaml) that provably reads the same; the rest,
and every error message, come from libyaml (PyYAML's C parser, of which go-yaml v2 is a port)
with the resolution above (libyaml_reader). Aliases are shared, never copied; an alias cycle
and an alias expansion beyond the node budget are errors, as nesting deeper than MAX_DEPTH is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from upgrade_guard.load.fast_yaml import read_fast
from upgrade_guard.load.yaml_scalars import MAX_DEPTH, YamlError, plain_differs


def read_documents(data: bytes | str) -> Iterator[tuple[int, Any]]:
    """(first line, value) for each document of a YAML (or JSON) stream."""
    fast = read_fast(data, MAX_DEPTH, plain_differs, read_one_faithfully)
    if fast is not None:
        yield from fast
    else:
        yield from read_documents_faithful(data)


def read_one_faithfully(document: bytes) -> Any:
    """One document of a stream, which the fast path may not read (a Deployment's quoted
    'true' beside a plain true), read the faithful way: the rest of the stream stays fast."""
    read = [value for _, value in read_documents_faithful(document)]
    if len(read) != 1:
        raise YamlError("not one document")
    return read[0]


def read_documents_faithful(data: bytes | str) -> Iterator[tuple[int, Any]]:
    """read_documents without the fast path (for tests and measurements)."""
    from upgrade_guard.load import libyaml_reader  # (PyYAML, which the fast path does without)

    return libyaml_reader.read_documents(data)
