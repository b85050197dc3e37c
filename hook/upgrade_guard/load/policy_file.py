"""Read a policy file from disk into a Policy."""

from __future__ import annotations

from upgrade_guard.load.documents import LoadError, load_documents
from upgrade_guard.policy import Policy, parse_policy


def read_policy(path: str) -> Policy:
    documents = list(load_documents(path))
    if len(documents) != 1:
        raise LoadError(f"{path}: a policy file holds exactly one YAML document")
    return parse_policy(documents[0].body, path)
