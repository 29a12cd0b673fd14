"""Benchmarks (not part of the test suite); ``scale_analysis`` is their pure part that the suite runs."""
