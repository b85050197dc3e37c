"""UG402 webhook-counter-below-live

What it flags: a live Validating- or MutatingWebhookConfiguration of the chart carrying a
counter (an `admission-contract`, the `controller-state-version`, any counter of the
policy, under its annotation) above the value this release declares for it (Chart.yaml's
`upgrade-guard.io/NAME`, else the chart's own webhook configuration's annotation). Only
webhook configurations the chart stamps with counters are read (`upgrade-guard stamp DIR
--counter NAME=N` stamps them beside the CRDs, and `verify-history` holds their counters as
the CRDs' are held).

Why it matters: the admission contract says which objects the webhooks admit and how they
mutate them. A newer release admitted and wrote objects under a newer contract; going back
below it is a rollback below the written contract: the older webhook refuses or rewrites
what the newer one let in, on the next update of each object.

Allowed: the live configuration at the chart's value or below it (an upgrade), or without
the annotation (first adoption); roll forward instead of back.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import HookSubject, stamped_number


def check(subject: HookSubject) -> Iterator[tuple[str, Change]]:
    for key, live in sorted(subject.live_webhooks.items()):
        ours = subject.webhooks.get(key)
        for name, annotation in sorted(subject.counter_keys.items()):
            written = stamped_number(live, annotation)
            declared = subject.chart_counters.get(name) or (
                stamped_number(ours, annotation) if ours is not None else None
            )
            if written is not None and declared is not None and written > declared:
                message = (
                    f"the live configuration carries {name} {written}, this release {declared}:"
                    " a newer release admitted objects under that contract"
                )
                yield key, Change(None, message, old=written, new=declared)


RULE = HookCheck(
    code="UG402",
    name="webhook-counter-below-live",
    severity=Severity.ERROR,
    summary="A live webhook configuration carries a newer counter than the chart.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "roll forward to a release at this contract or newer, or roll back to the revision"
        " still deployed (helm history RELEASE)"
    ),
    author="nothing: the cluster holds a newer release's admission contract",
)
