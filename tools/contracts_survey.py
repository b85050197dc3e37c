"""Survey the finalizer and condition checks (issue 24) over every project's release history
in ../shared/corpus: consecutive tags compared as verify-history compares a baseline and a
candidate, by the rules themselves (UG721, UG722, UG723), with no policy (the corpus holds
CRDs only), so the vocabulary is what the CRDs carry: the enum on status.conditions[].type
of each storage version.

    .venv/bin/python tools/contracts_survey.py [--project NAME ...]

Per tag it counts the CRDs whose storage schema has status.conditions[].type, those with an
enum there, and those whose description lists "known values are (...)" (cert-manager's
style: documentation, which the guard does not read; shown for what a policy declaration
would hold). Per pair it prints the rules' findings and the documented types that vanished or
appeared.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from corpus import CORPUS, tags  # noqa: E402
from upgrade_guard.crd import Crd  # noqa: E402
from upgrade_guard.load.crds import crds_from  # noqa: E402
from upgrade_guard.load.documents import load_documents  # noqa: E402
from upgrade_guard.rules import (  # noqa: E402
    condition_reason_removed,
    condition_type_removed,
    finalizer_removed_without_migration,
)
from upgrade_guard.subjects import HistorySubject, Side, schema_condition_types  # noqa: E402

RULES = (
    finalizer_removed_without_migration.RULE,
    condition_type_removed.RULE,
    condition_reason_removed.RULE,
)
_KNOWN = re.compile(r"known values are \(([^)]*)\)")


def condition_type_node(crd: Crd) -> Mapping[str, Any] | None:
    version = crd.storage_version
    node: Any = crd.schemas[version] if version else None
    for step in ("status", "conditions", None, "type"):
        if not isinstance(node, Mapping):
            return None
        node = node.get("items") if step is None else (node.get("properties") or {}).get(step)
    return node if isinstance(node, Mapping) else None


def documented(crds: Mapping[str, Crd]) -> dict[str, set[str]]:
    found = {}
    for name, crd in crds.items():
        node = condition_type_node(crd)
        match = _KNOWN.search(str((node or {}).get("description") or ""))
        if match:
            found[name] = set(re.findall(r"[A-Za-z][-\w./]*", match.group(1)))
    return found


def survey(project: str) -> None:
    previous: tuple[str, dict[str, Crd]] | None = None
    for tag in tags(project):
        crds = crds_from(load_documents(str(CORPUS / project / tag)))
        typed = [n for n, c in crds.items() if condition_type_node(c) is not None]
        enums = [n for n in typed if schema_condition_types(crds[n]) is not None]
        docs = documented(crds)
        print(
            f"{project} {tag}: {len(crds)} CRDs, {len(typed)} with status.conditions[].type,"
            f" {len(enums)} with an enum there, {len(docs)} documenting known values"
        )
        if previous is not None:
            label, before = previous
            subject = HistorySubject(
                Side(label, before), Side(tag, crds), {}, {}, "", "", (), (), ""
            )
            found = [
                (rule.code, crd, change) for rule in RULES for crd, change in rule.check(subject)
            ]
            for code, crd, change in found:
                print(f"  {label} -> {tag}: {code} {crd}: {change.message}")
            before_docs = documented(before)
            for name in sorted(before_docs.keys() & docs.keys()):
                for change, names in (
                    ("gone from", before_docs[name] - docs[name]),
                    ("added to", docs[name] - before_docs[name]),
                ):
                    if names:
                        print(
                            f"  {label} -> {tag}: documented types {change} {name}: {sorted(names)}"
                        )
            print(f"  {label} -> {tag}: {len(found)} finding(s) of UG721/UG722/UG723")
        previous = (tag, crds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", action="append", help="a corpus project (default: all)")
    chosen = parser.parse_args().project or sorted(
        p.name for p in CORPUS.iterdir() if (p / "RELEASES.tsv").is_file()
    )
    for project in chosen:
        survey(project)
    return 0


if __name__ == "__main__":
    sys.exit(main())
