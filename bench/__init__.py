"""Benchmarks: ``python -m bench.train`` and ``python -m bench.encode`` (see the README)."""
