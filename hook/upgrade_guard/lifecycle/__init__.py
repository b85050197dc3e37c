"""API lifecycle over release history: version tiers, deprecation windows, graduation order.

Pure: ``timeline`` turns the CRDs read at each release tag into each version's history,
``settings`` is the policy's ``lifecycle:`` section. The lifecycle rules (``LifecycleRule``)
sit with every other rule in ``upgrade_guard/rules/``; ``commands/verify_lifecycle.py`` runs
them and has them judged.
"""
