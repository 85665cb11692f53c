"""DP Studio: differential privacy across trust models, on the analyst's own data."""

#: The version of DP Studio: the package metadata's (pyproject.toml reads it from here),
#: ``dpstudio --version``, Help ▸ About, release manifests and project files.
__version__ = "0.1.0"
