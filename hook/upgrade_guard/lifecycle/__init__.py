"""API lifecycle over release history: version tiers, deprecation windows, graduation order.

Pure: ``timeline`` turns the CRDs read at each release tag into each version's history,
``settings`` is the policy's ``lifecycle:`` section, ``rules/`` holds one module per rule
(registered with every rule in ``upgrade_guard/rules/__init__.py``), and ``verify`` runs
them into an Outcome.
"""
