"""API lifecycle over release history: version tiers, deprecation windows, graduation order.

Pure: ``timeline`` turns the CRDs read at each release tag into each version's history,
``settings`` is the policy's ``lifecycle:`` section; the lifecycle rules (``LifecycleRule``)
sit with every other rule in ``upgrade_guard/rules/``, and ``verify`` runs them into an
Outcome.
"""
