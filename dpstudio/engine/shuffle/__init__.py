"""The shuffle model: amplification by shuffling and multi-message summation protocols."""
