"""Pages ``upgrade-guard explain`` prints besides the rules: how to use a feature, for users."""

from __future__ import annotations

DECLARED_BREAKS = """\
declared-breaks: saying that a break is meant

A finding is an error because objects already stored would be hurt. When the authors mean
the change (a field nobody ever set, a value the controller never accepted), they declare it
in the policy, .upgrade-guard.yaml at the repository root (or --policy FILE). The finding
stays in the report, marked excused with the reason, and no longer refuses.

  declared-breaks:
    - crd: backups.example.io        # the CRD's metadata.name, or a glob
      rule: property-removed         # the code (UG201) or the name
      version: v1                    # optional: this CRD version only
      path: spec.legacyPath          # omitted for findings about the whole CRD
      reason: legacyPath was ignored by the controller since 1.0.

One entry for many findings:
  - path is a glob over the report's dotted path: * is any text within one segment (it does
    not cross a dot; receivers[] is one segment), ** any text. spec.receivers[].* matches
    spec.receivers[].name, spec.** everything under spec.
  - crd is a glob too: "*.monitoring.coreos.com".
  - a group names the change instead of the place: old and new exactly as the json report
    shows them. It excuses every finding of its rule with that change (within path, if
    given):

    - crd: "*.monitoring.coreos.com"
      rule: bound-tightened
      old: null
      new: 1
      reason: empty strings were never valid for the controller.

Writing them: `upgrade-guard diff OLD NEW --declare-breaks` appends every finding that
refuses to the policy, one entry per CRD, version and path (no glob, no group), each with
reason: "" (and schema-version: N when the new CRDs rise to schema version N). The policy
is refused until every reason says why, so nothing is excused by accident. Read each entry
before filling it; widen one by hand (a glob, a group) only where that is what you mean.

Releases: with stamped CRDs, add schema-version: N to a break that ships with schema version
N. verify-history, diff and the hook then use it only for the release that crosses N; a
finding it would have excused in another release carries a note saying why it did not.

Stale entries: a break that excuses nothing is itself an error (UG902), with the nearest CRD
or path when it looks misspelt, so an old declaration cannot hide a later break. A break
whose CRDs are all unchanged (the live CRD already equals the chart's) is idle, not stale.
"""

TOPICS: dict[str, str] = {"declared-breaks": DECLARED_BREAKS}
