"""Secure aggregation and distributed noise: the server sees only the (noisy) sum."""
