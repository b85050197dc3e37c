"""The Kubernetes CEL libraries as registered for the runtime: each call beside the nearest
one that answers the other way (results as Kubernetes documents them)."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.apiserver import cel_rules

CASES: list[tuple[str, Any]] = [
    ("isURL('https://example.com/a')", True),
    ("isURL('example.com')", False),
    ("url('https://user@example.com:8443/p?q=1').getHost()", "example.com:8443"),
    ("url('https://example.com:8443/p').getHostname()", "example.com"),
    ("url('https://[::1]:80/').getHostname()", "::1"),
    ("url('https://example.com:8443/p').getPort()", "8443"),
    ("url('https://example.com/p').getPort()", ""),
    ("url('https://example.com/a/b').getEscapedPath()", "/a/b"),
    ("url('https://example.com/?a=1&a=2').getQuery()['a']", ["1", "2"]),
    ("'abc123'.find('[0-9]+')", "123"),
    ("'abc'.find('[0-9]+')", ""),
    ("'a1b2c3'.findAll('[0-9]', 2)", ["1", "2"]),
    ("[1, 2, 3].isSorted()", True),
    ("[3, 1].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("['b', 'a'].min()", "a"),
    ("isQuantity('1.5Gi')", True),
    ("isQuantity('1.5GB')", False),
    ("quantity('1Gi').isGreaterThan(quantity('1G'))", True),
    ("quantity('1k').compareTo(quantity('1000'))", 0),
    ("quantity('500m').isInteger()", False),
    ("quantity('2k').asInteger()", 2000),
    ("quantity('1').add(quantity('500m')).asApproximateFloat()", 1.5),
    ("quantity('1').sub(2).sign()", -1),
    ("sets.contains([1, 2, 3], [3, 1])", True),
    ("sets.contains([1, 2], [4])", False),
    ("sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets.intersects([1, 2], [3])", False),
    ("isIP('10.0.0.1')", True),
    ("isIP('010.0.0.1')", False),
    ("isIP('::ffff:1.2.3.4')", False),
    ("ip('fe80::1').isLinkLocalUnicast()", True),
    ("ip('8.8.8.8').isGlobalUnicast()", True),
    ("ip('127.0.0.1').isGlobalUnicast()", False),
    ("ip.isCanonical('2001:db8::1')", True),
    ("ip.isCanonical('2001:DB8::1')", False),
    ("ip('::1').family()", 6),
    ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", True),
    ("cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", False),
    ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
    ("cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')", False),
    ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", True),
    ("cidr('10.0.0.0/8').prefixLength()", 8),
    ("isCIDR('10.0.0.0/33')", False),
    ("isSemver('1.2.3-rc.1+build')", True),
    ("isSemver('v1.2')", False),
    ("isSemver('v1.2', true)", True),
    ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
    ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
    ("semver('1.2.3').major()", 1),
    ("'héllo'.size()", 5),
    ("'a,b'.split(',')", ["a", "b"]),
]


@pytest.mark.parametrize(("expression", "expected"), CASES, ids=[c[0] for c in CASES])
def test_library(expression: str, expected: Any) -> None:
    program = cel_rules.environment((1, 35)).compile(expression)
    result = program.eval(data={"self": None})
    assert result.plain_value() == expected


@pytest.mark.parametrize(
    ("expression", "since"),
    [
        ("isQuantity('1')", (1, 28)),
        ("sets.contains([1], [1])", (1, 29)),
        ("isIP('::1')", (1, 30)),
        ("isSemver('1.0.0')", (1, 33)),
    ],
)
def test_library_arrives_with_its_version(expression: str, since: tuple[int, int]) -> None:
    cel_rules.environment(since).compile(expression)
    before = (since[0], since[1] - 1)
    with pytest.raises(RuntimeError):
        cel_rules.environment(before).compile(expression)
