"""The membership benchmark (`make bench`, `python -m bench.run`) and soak (`make soak`,
`python -m bench.soak`): see docs/benchmark.md."""
