"""UG213 validation-rule-added

What it flags: an x-kubernetes-validations (CEL) rule whose expression is new, or whose
optionalOldSelf changed. A rule that uses oldSelf is a transition rule: it runs on UPDATE
only, compares against the stored object, and is never ratcheted.

Why it matters: stored objects that break the new rule can no longer be created as they are;
updates of them (including an operator's status writes, since CEL rules see the whole object)
fail before Kubernetes 1.30. From 1.30 rules without oldSelf are ratcheted on UPDATE; a
/status write runs them unratcheted before 1.33 (kubernetes#129506), so there, where the
version has the status subresource, objects failing the rule refuse every status write.

Allowed: a rule removed, or only its message, messageExpression, reason or fieldPath changed;
a rule rewritten to the same syntax tree (other quotes, spaces, line breaks). Info only: a rule
every object the old schema stores passes, because what it tests with ``has()`` is a field the
old schema does not have, pruned from every stored object (``!has(self.externalId) || ...``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def _by_expression(node: schema.Node) -> dict[str, Mapping[str, Any]]:
    return {str(entry.get("rule")): entry for entry in node.get("x-kubernetes-validations") or []}


def compare(at: schema.Location) -> Iterator[Change]:
    # Imported where a node's rules changed: the CEL parser and cost model load slowly, and
    # most diffs (and every diff without CEL rules) never get here.
    from upgrade_guard.apiserver import cel_reads

    old, new = at.old, at.new
    before = _by_expression(old)
    for expression, entry in _by_expression(new).items():
        transition = schema.uses_old_self(expression)
        kind = "transition rule" if transition else "rule"
        previous = before.get(expression) or next(
            (entry for text, entry in before.items() if cel_reads.same_rule(text, expression)),
            None,
        )
        if previous is None and not transition and cel_reads.holds_without(expression, old):
            yield Change(
                (),
                f"CEL rule added: {expression} (every object the old schema stores passes it:"
                " the fields it tests with has() are not in the old schema)",
                None,
                expression,
                severity=Severity.INFO,
            )
        elif previous is None:
            yield Change(
                (), f"CEL {kind} added: {expression}", None, expression, ratchetable=not transition
            )
        elif bool(previous.get("optionalOldSelf")) != bool(entry.get("optionalOldSelf")):
            yield Change(
                (),
                f"optionalOldSelf changed on CEL {kind}: {expression}",
                previous.get("optionalOldSelf"),
                entry.get("optionalOldSelf"),
            )


RULE = PropertyRule(
    code="UG213",
    name="validation-rule-added",
    severity=Severity.ERROR,
    summary="A CEL validation rule was added or changed.",
    ratcheting="yes, except rules using `oldSelf`",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-validations"}),
    harm=Harm.REFUSED_ON_WRITE,
)
