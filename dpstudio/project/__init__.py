"""project layer."""
