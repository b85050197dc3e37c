"""The pipelines that run the checks end to end: the hook's (``hook_run.run``)."""
