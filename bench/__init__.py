"""Benchmarks: run with `python -m bench.NAME`; results go into docs/benchmarks.md."""
