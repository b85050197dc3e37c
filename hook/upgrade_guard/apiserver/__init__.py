"""Judging stored objects by a candidate CRD schema, as the apiserver would.

Pure: plain dicts in, plain data out; never imports the Kubernetes client, typer or rich.
:mod:`judge` is the entry point; the other modules are its parts (OpenAPI validation,
read-back, list types, embedded resources, CEL rules and the Kubernetes CEL libraries).
"""

from . import openapi, values


def forget_schemas() -> None:
    """Drop what the model remembers of schema nodes by identity (each entry holds its node,
    so that its id stays its): a run that compares one CRD set after another (release
    histories, benchmarks) would otherwise keep every set it read."""
    values.forget_schemas()
    openapi.forget_schemas()
