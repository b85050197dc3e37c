"""Contract counters: the schema version and digest every CRD carries, and the rules that move them.

Pure: reads no files and runs no git. ``digest`` normalizes a CRD spec and hashes it,
``history`` judges a candidate CRD set against its baseline (version rules, other counters,
the engine on storage versions). The hook's checks of the counters against the cluster are
steps of its pipeline (``pipelines/hook_run.py``).
"""
