"""DP Studio: differential privacy across trust models, on the analyst's own data."""

__version__ = "0.1.0"
