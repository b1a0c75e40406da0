# Each target sets itself up: a fresh clone needs nothing but Python 3.11.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test check lint bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/backroom serve

# Everything: slow tests (real processes) and PostgreSQL ones (they skip without a server).
test: $(STAMP)
	$(PY) -m pytest

# The quick loop while working: lint and every test that starts no process.
check: lint
	$(PY) -m pytest -q -m "not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy --strict src bench
	@# Test directories are not packages (pytest imports their helpers by file name),
	@# so two conftest.py would clash in one run: each directory is checked on its own.
	@for tree in tests/conftest.py $(wildcard tests/*/); do \
		$(VENV)/bin/mypy --strict $$tree || exit 1; \
	done

bench: $(STAMP)
	$(PY) -m bench.sqlite_throughput
	$(PY) -m bench.api_throughput

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
