"""Benchmarks and measurement commands (run with ``python -m benchmarks.<name>``)."""
