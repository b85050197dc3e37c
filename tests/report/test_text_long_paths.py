"""A long schema path stays on its finding's head line, whole and copyable; only prose wraps."""

from __future__ import annotations

from upgrade_guard.findings import Finding, Outcome, Severity
from upgrade_guard.report import REPORTERS

PATH = "spec.acme.solvers[].http01.gatewayHTTPRoute.podTemplate.spec.imagePullSecrets"
LONG = Finding(
    code="UG214",
    rule="list-type-changed",
    severity=Severity.ERROR,
    crd="issuers.cert-manager.io",
    version="v1",
    path=PATH,
    message="list type changed: atomic -> map; " + "an explanation that goes on " * 4,
)


def test_the_head_line_keeps_code_version_and_path_together() -> None:
    lines = REPORTERS["text"](Outcome(findings=(LONG,), crds_compared=1)).splitlines()
    assert lines[1] == f"  error   UG214 list-type-changed  v1 {PATH}"
    assert not any(line.startswith(PATH) for line in lines)


def test_prose_still_wraps_at_80_columns_under_the_head() -> None:
    lines = REPORTERS["text"](Outcome(findings=(LONG,), crds_compared=1)).splitlines()
    prose = lines[2:-3]
    assert len(prose) > 1
    assert all(len(line) <= 80 and line.startswith(" " * 10) for line in prose)
