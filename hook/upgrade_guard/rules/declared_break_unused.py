"""UG902 declared-break-unused

What it flags: a declared break in the policy that excuses no finding of this comparison,
where a CRD it names changes. A break for CRDs that are all unchanged (the live CRD already
equals the chart's: the release it was declared for is applied) is idle, not flagged.

Why it matters: a declaration that no longer matches (the path moved, the break was reverted,
or it was written for another release) would otherwise linger and later excuse a break nobody
reviewed. Declarations are kept exact: one finding, one reason.

Allowed: every declared break matches at least one finding, or is scoped with the
`schema-version` of the release it ships with (`diff --declare-breaks` writes it), so other
releases skip it. Chart author: remove the break or give it its `schema-version`.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.kinds import EngineRule

RULE = EngineRule(
    code="UG902",
    name="declared-break-unused",
    severity=Severity.ERROR,
    summary="A declared break in the policy matches no finding.",
    doc=__doc__ or "",
    way_out="accept it: the break is the chart's policy's, not yours",
    author="remove the break, or scope it with schema-version: N (the release it ships with)",
)
