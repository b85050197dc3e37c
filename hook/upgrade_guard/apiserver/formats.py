"""The string formats the apiserver validates, as kube-openapi's strfmt registry checks them.

The apiserver strips every other format from a CRD schema before validating
(apiextensions-apiserver ``pkg/apiserver/validation/formats.go``): ``int32``, ``password``
or a made-up name never refuse a value. ``k8s-short-name`` and ``k8s-long-name`` count from
Kubernetes 1.34. Names are compared without dashes, as go-openapi normalizes them.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import ipaddress
import re
from collections.abc import Callable

from . import minors

# Go's HostnamePattern; \p{L}\p{S} approximated by word characters but "_", and ASCII symbols.
_A = r"(?:[$+<=>^`|~]|[^\W_])"
_HOSTNAME = (
    rf"^({_A}((-?{_A}{{0,62}})?)|({_A}((({_A}|-){{0,61}}{_A})?)(\.)){{1,}}([^\W\d_]){{2,63}})$"
)
_UUID = {
    "uuid": r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
}
_TIME_OF_DAY = r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
_SHORT_NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_LONG_NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DURATION_PART = r"((\d+)\s*([A-Za-zµ]+))"
_GO_DURATION = r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$"
_DURATION_UNITS = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_SSN = r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"
_HEXCOLOR = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
_RGBCOLOR = (
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
    r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_BSON_OBJECT_ID = r"^[0-9a-fA-F]{24}$"
_MAC = (
    r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$"
    r"|^([0-9A-Fa-f]{2}[:-]){19}[0-9A-Fa-f]{2}$"
    r"|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$|^([0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}$"
    r"|^([0-9A-Fa-f]{4}\.){9}[0-9A-Fa-f]{4}$"
)


@functools.cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A format's pattern, compiled when a value of it is first checked (most runs check
    none)."""
    return re.compile(pattern, flags)


def is_date(text: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_date_time(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    found = _compiled(_TIME_OF_DAY).search(parts[1])
    if not found:
        return False
    return found[1] <= "23" and found[2] <= "59" and found[3] <= "59"


def is_duration(text: str) -> bool:
    if _compiled(_GO_DURATION).match(text):
        return True
    for match in _compiled(_DURATION_PART).findall(text):
        unit = match[2].strip().lower()
        for variants in _DURATION_UNITS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant.lower() == unit:
                    return True
    return False


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's net.ParseIP, sloppy as Kubernetes' netutils: IPv4 parts may have leading zeros."""
    if "." in text and ":" not in text:
        parts = text.split(".")
        if len(parts) != 4 or not all(p.isdigit() and p.isascii() and len(p) <= 3 for p in parts):
            return None
        numbers = [int(p) for p in parts]
        if any(n > 255 for n in numbers):
            return None
        return ipaddress.IPv4Address(".".join(str(n) for n in numbers))
    if "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return address


def _is_ipv4(text: str) -> bool:
    return parse_ip(text) is not None and "." in text


def _is_ipv6(text: str) -> bool:
    return ":" in text and parse_ip(text) is not None


def parse_cidr(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    address, slash, prefix = text.partition("/")
    ip = parse_ip(address)
    if not slash or ip is None or not prefix.isdigit() or not prefix.isascii() or len(prefix) > 3:
        return None
    if int(prefix) > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{int(prefix)}", strict=False)


def _is_cidr(text: str) -> bool:
    return parse_cidr(text) is not None


def _is_uri(text: str) -> bool:
    """Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment handling."""
    if not text or any(ord(c) < 0x20 or c == "\x7f" or c == " " for c in text):
        return False
    if text.startswith("/"):
        return True
    scheme, colon, _ = text.partition(":")
    return bool(colon) and bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*", scheme))


def _is_email(text: str) -> bool:
    from email.headerregistry import Address  # (only this format needs the email package)

    match = re.fullmatch(r"\s*(?:[^<>]*<)?([^<>@\s]+)@([^<>@\s]+?)>?\s*", text)
    if not match:
        return False
    try:
        Address(username=match[1], domain=match[2])
    except (ValueError, IndexError):
        return False
    return True


def _is_byte(text: str) -> bool:
    if not _compiled(_BASE64).match(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except binascii.Error:
        return False
    return True


def _is_hostname(text: str) -> bool:
    return (
        bool(_compiled(_HOSTNAME).match(text))
        and len(text) <= 255
        and all(len(part) <= 63 for part in text.split("."))
    )


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _is_isbn10(text: str) -> bool:
    clean = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"\d{9}[\dX]", clean):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(clean))
    return total % 11 == 0


def _is_isbn13(text: str) -> bool:
    clean = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"\d{13}", clean):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(clean))
    return total % 10 == 0


def _is_creditcard(text: str) -> bool:
    digits = _digits(text)
    pattern = (
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}"
        r"|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
        r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$"
    )
    if not re.match(pattern, digits):
        return False
    total, double = 0, False
    for c in reversed(digits):
        n = int(c) * (2 if double else 1)
        total += n - 9 if n > 9 else n
        double = not double
    return total % 10 == 0


def _matcher(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    return lambda text: bool(_compiled(pattern, flags).match(text))


_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_compiled(_BSON_OBJECT_ID).match(s)),
    "uri": _is_uri,
    "email": _is_email,
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": lambda s: bool(_compiled(_MAC).match(s)),
    **{name: _matcher(pattern, re.IGNORECASE) for name, pattern in _UUID.items()},
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_creditcard,
    "ssn": lambda s: bool(_compiled(_SSN).match(s)),
    "hexcolor": lambda s: bool(_compiled(_HEXCOLOR).match(s)),
    "rgbcolor": lambda s: bool(_compiled(_RGBCOLOR).match(s)),
    "byte": _is_byte,
    "password": lambda s: True,
    "date": is_date,
    "duration": is_duration,
    "datetime": is_date_time,
}
_FROM_1_34: dict[str, Callable[[str], bool]] = {
    "k8sshortname": lambda s: len(s) <= 63 and bool(_compiled(_SHORT_NAME).match(s)),
    "k8slongname": lambda s: len(s) <= 253 and bool(_compiled(_LONG_NAME).match(s)),
}


def checker(name: str, kube_version: tuple[int, int]) -> Callable[[str], bool] | None:
    """The check the apiserver of ``kube_version`` applies for ``format: name``, or None
    when it strips that format (the value is then any string): it knows the formats of its
    compatibility version (``StripUnsupportedFormatsPostProcessorForVersion``), so those
    introduced at 1.34 from 1.35."""
    normalized = name.replace("-", "")
    if normalized in _CHECKS:
        return _CHECKS[normalized]
    if minors.compatibility(kube_version) >= (1, 34):
        return _FROM_1_34.get(normalized)
    return None
