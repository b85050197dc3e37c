"""Where Python's ``json`` and Go's encoding/json read a body differently: what we read.

Each case is a CRD sent as a JSON body with one part written out by hand: the annotations
object (``ANNOTATIONS``) or a schema default (``DEFAULT``, any JSON value), and what
Kubernetes reads there (``REFUSED`` where it refuses the body). tests/load/test_load_json.py
holds our reader to the table; tests/cluster/test_json_reading.py holds the table to the
real apiserver and to kubectl.
"""

from __future__ import annotations

from typing import Any, NamedTuple

REFUSED = "refused"
ANNOTATIONS = b"@ANNOTATIONS@"
DEFAULT = b"@DEFAULT@"
CRD = (
    b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",'
    b'"metadata":{"name":"widgets.json.example.io","annotations":@ANNOTATIONS@},'
    b'"spec":{"group":"json.example.io","scope":"Namespaced",'
    b'"names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,'
    b'"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":'
    b'{"n":{"x-kubernetes-preserve-unknown-fields":true,"default":@DEFAULT@}}}}}]}}'
)


class Case(NamedTuple):
    name: str
    annotations: bytes
    default: bytes
    annotations_read: Any
    default_read: Any
    kubectl_agrees: bool = (
        True  # kubectl's client-side reading, where it differs from the apiserver's
    )


CASES = [
    Case("plain", b'{"a":"x"}', b"1", {"a": "x"}, 1),
    Case("duplicate key: the last wins", b'{"a":"1","a":"2"}', b"1", {"a": "2"}, 1),
    Case("1e3 is the number 1000", b"{}", b"1e3", {}, 1000.0),
    Case("beyond int64: a float64", b"{}", b"99999999999999999999", {}, 1e20),
    Case(
        "beyond int64, within uint64: a float64",
        b"{}",
        b"18446744073709551615",
        {},
        18446744073709551615.0,
    ),
    Case("below int64: a float64", b"{}", b"-9223372036854775809", {}, -9223372036854775808.0),
    Case("int64's largest stays exact", b"{}", b"9223372036854775807", {}, 9223372036854775807),
    Case("beyond float64: refused", b"{}", b"1e400", REFUSED, REFUSED),
    Case("lone surrogate escape: U+FFFD", b'{"a":"x\\ud800y"}', b"1", {"a": "x\ufffdy"}, 1),
    Case("lone surrogate escape in a key", b"{}", b'{"\\udc00":"x"}', {}, {"\ufffd": "x"}),
    Case("surrogate pair escape: one character", b'{"a":"\\ud83d\\ude00"}', b"1", {"a": "😀"}, 1),
    Case("escaped slash", b'{"a":"\\/"}', b"1", {"a": "/"}, 1),
    Case(
        "invalid UTF-8: U+FFFD per byte",
        b'{"a":"\xff\xe2\x82X\xed\xa0\x80"}',
        b"1",
        {"a": "\ufffd\ufffd\ufffdX\ufffd\ufffd\ufffd"},
        1,
        kubectl_agrees=False,  # kubectl v1.35.2 prints two U+FFFD for \xff\xe2\x82
    ),
]


def body(case: Case) -> bytes:
    return CRD.replace(ANNOTATIONS, case.annotations).replace(DEFAULT, case.default)


def read_back(crd: Any) -> tuple[Any, Any]:
    """(annotations, default) of a CRD as read."""
    properties = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    return crd["metadata"].get("annotations", {}), properties["n"]["default"]
