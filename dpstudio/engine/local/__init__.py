"""Local differential privacy: each record is randomized before it leaves its owner."""
