"""UG903 acceptance-unused

What it flags: an acceptance a cluster admin gave at upgrade time (`upgrade-guard.accept`, the
hook's `--accept`) that accepts no finding of this upgrade: it names another chart version
than the one being installed (as `helm upgrade --reuse-values` carries it into the next
upgrade), or no finding has its exact code, CRD, version and path. An acceptance for CRDs
that are all unchanged (the live CRD already equals the chart's: the upgrade it was given for
is applied) is idle, not flagged.

Why it matters: an acceptance is a person's judgement of one finding of one release. Carried
on to another release, or left over after the finding changed, it would accept what nobody
looked at.

Allowed: every acceptance names this chart version and a finding of this upgrade exactly.
Way out now: drop the acceptances (`--set-json 'upgrade-guard.accept=[]'`), or give them
again for this chart version, copied from this report's `accept:` lines.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.kinds import EngineRule

RULE = EngineRule(
    code="UG903",
    name="acceptance-unused",
    severity=Severity.ERROR,
    summary="A cluster admin's acceptance matches no finding of this chart version.",
    doc=__doc__ or "",
    way_out=(
        "drop the acceptances (--set-json 'upgrade-guard.accept=[]'), or give them again for"
        " this chart version from this report's accept: lines"
    ),
    author="nothing: the acceptance is the admin's",
)
