"""The hook's report, for `kubectl logs` and for the log Helm prints when a hook fails.

Helm 4 prints a failed hook's log on one line with newlines escaped, so the verdict comes
first and every finding is one short line; each refusal is followed by the way out. The
summary for the termination log (``kubectl describe``) stays under Kubernetes' 4096 bytes.
Names and schema paths only: no stored object's values.
"""

from __future__ import annotations

from upgrade_guard.findings import Finding, Outcome
from upgrade_guard.report.json_report import summary

TERMINATION_LIMIT = 4096
_DECLARE = (
    "if meant, declare it in the policy (declared-breaks: crd, rule, path, reason);"
    " else keep the live schema"
)
_WAYS_OUT = {
    "UG101": "keep the CRD in the chart, or delete it and its objects deliberately first",
    "UG104": (
        "migrate storage first: rewrite every object at the storage version, remove the old"
        " version from status.storedVersions, then drop it from the chart"
    ),
    "UG106": "serve the new version for one release before making it the storage version",
    "UG601": "deploy the image that goes with this chart, or add the image to the chart's table",
    "UG602": (
        "deploy the image that goes with this chart (helm upgrade --reset-then-reuse-values,"
        " or set the image tag), or install the chart that goes with this image"
    ),
    "UG603": (
        "roll forward to a release at this schema version or newer; a rollback would prune"
        " or refuse what the newer release stored"
    ),
    "UG604": "bump crd-schema-version in the chart (upgrade-guard stamp --schema-version N)",
    "UG605": (
        "roll forward to a release that reads this state, or restore the objects named from"
        " a backup taken before the newer release"
    ),
}


def way_out(finding: Finding) -> str:
    return _WAYS_OUT.get(finding.code, _DECLARE)


def finding_line(finding: Finding) -> str:
    where = " ".join(p for p in (finding.crd, finding.version, finding.path) if p)
    label = "excused" if finding.excused else str(finding.severity)
    return f"{label} {finding.code} {finding.rule} {where}: {finding.message}"


def verdict_line(outcome: Outcome, phase: str, checked: int) -> str:
    counts = summary(outcome)
    tally = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    state = "SAFE" if outcome.safe else "REFUSED"
    crds = "CRD" if checked == 1 else "CRDs"
    return f"upgrade-guard {state}: {phase} of {checked} {crds}; {tally or 'no findings'}"


def render(outcome: Outcome, phase: str, checked: int, footer: str = "") -> str:
    lines = [verdict_line(outcome, phase, checked)]
    refusing = [f for f in outcome.findings if f.refuses]
    others = [f for f in outcome.findings if not f.refuses]
    for finding in refusing:
        lines.append(finding_line(finding))
        lines.extend(_evidence_lines(finding))
        lines.append(f"  way out: {way_out(finding)}")
    for finding in others:
        lines.append(finding_line(finding))
        lines.extend(_evidence_lines(finding))
        if finding.excused:
            lines.append(f"  excused: {finding.excused}")
    if footer:
        lines.append(footer)
    return "\n".join(lines) + "\n"


def _evidence_lines(finding: Finding) -> list[str]:
    """What the stored objects showed (names and counts only)."""
    return [f"  {note}" for note in finding.notes if note.startswith("evidence: ")]


def termination_summary(outcome: Outcome, phase: str, checked: int) -> str:
    """The verdict and as many refusals as fit in the termination message."""
    lines = [verdict_line(outcome, phase, checked)]
    refusing = [f for f in outcome.findings if f.refuses]
    used = len(lines[0].encode()) + 1
    for index, finding in enumerate(refusing):
        line = " ".join(p for p in (finding.code, finding.crd, finding.version, finding.path) if p)
        rest = len(refusing) - index
        tail = f"... and {rest} more: see the Job's log"
        if used + len(line.encode()) + 1 + len(tail.encode()) + 1 > TERMINATION_LIMIT:
            lines.append(tail)
            break
        lines.append(line)
        used += len(line.encode()) + 1
    return fit("\n".join(lines) + "\n")


def fit(text: str) -> str:
    """text cut to the termination message limit (a long single line too)."""
    data = text.encode()
    if len(data) <= TERMINATION_LIMIT:
        return text
    return data[: TERMINATION_LIMIT - 4].decode("utf-8", "ignore") + "...\n"
