"""upgrade-guard: refuse Kubernetes operator upgrades that would hurt objects already stored."""

# The one place the version is written: pyproject.toml reads it from here, and --version
# prints it without importlib.metadata (which imports the email package to read it back).
__version__ = "0.1.0"
