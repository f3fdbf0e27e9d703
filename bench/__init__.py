"""The membership benchmark (`make bench`, `python -m bench.run`): see docs/benchmark.md."""
