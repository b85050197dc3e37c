"""Judging stored objects by a candidate CRD schema, as the apiserver would.

Pure: plain dicts in, plain data out; never imports the Kubernetes client, typer or rich.
:mod:`judge` is the entry point; the other modules are its parts (OpenAPI validation,
read-back, list types, embedded resources, CEL rules and the Kubernetes CEL libraries).
"""
