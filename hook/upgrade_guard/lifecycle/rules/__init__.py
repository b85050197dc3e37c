"""The lifecycle rules, one module each; the one registry (``upgrade_guard.rules``) lists them
with every other rule."""

# The registry imports every module here, and each of them the registry's base: loading the
# registry first keeps that order whichever module is imported first.
import upgrade_guard.rules  # noqa: F401
