.PHONY: check lint test bench

check: lint test

lint:
	ruff check .
	ruff format --check .
	mypy

test:
	pytest

bench:
	python benchmarks/bench_lattice.py
