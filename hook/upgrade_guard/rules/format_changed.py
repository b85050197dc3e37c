"""UG210 format-changed

What it flags: a format the apiserver validates added to a field, or changed to another such
format. The apiserver validates only the string formats of apiextensions' formats.go
(uuid, date-time, date, duration, byte, ipv4, ipv6, cidr, mac, hostname, email, uri, ...;
k8s-short-name and k8s-long-name from Kubernetes 1.35: introduced at 1.34, they hold from
the minor whose compatibility version has them) and strips every other format
(int32, int64, double, unknown names); password accepts any string.

Why it matters: stored values that do not match can no longer be created as they are, and fail
every update before Kubernetes 1.30 (ratcheted from 1.30).

Allowed: the format removed, or one the apiserver does not validate added.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location

# Names as go-openapi normalises them: dashes removed.
_VALIDATED = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
        "rgbcolor", "byte", "date", "duration", "datetime",
    }
)  # fmt: skip
_VALIDATED_SINCE = {"k8sshortname": (1, 35), "k8slongname": (1, 35)}


def _normalised(name: object) -> str | None:
    return None if name is None else str(name).replace("-", "")


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = _normalised(old.get("format")), _normalised(new.get("format"))
    if after is None or before == after:
        return
    if after not in _VALIDATED and after not in _VALIDATED_SINCE:
        return
    yield Change(
        (),
        f"format changed: {old.get('format') or 'none'} -> {new.get('format')}",
        old.get("format"),
        new.get("format"),
        ratchetable=True,
        since=_VALIDATED_SINCE.get(after),
    )


RULE = PropertyRule(
    code="UG210",
    name="format-changed",
    severity=Severity.ERROR,
    summary="A format the apiserver validates was added or changed.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"format"}),
    harm=Harm.REFUSED_ON_WRITE,
)
