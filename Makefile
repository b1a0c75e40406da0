# Each target sets itself up: a fresh clone needs nothing but Python 3.11.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv run test test-deps check lint bench bench-peers bench-peers-smoke clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/backroom serve

# Everything: slow tests (real processes) and PostgreSQL ones (they skip without a server).
# The tests behind LiteLLM's proxy mostly wait out its minute-long rate windows, so they
# run as a second session beside the rest (each session makes its own database), and
# their report follows the rest's.
test: $(STAMP) test-deps
	@mkdir -p build
	@$(PY) -m pytest -p no:cacheprovider tests/llm_proxy >build/test-llm-proxy.log 2>&1 & \
	proxy=$$!; \
	$(PY) -m pytest --ignore=tests/llm_proxy; rest=$$?; \
	wait $$proxy; proxied=$$?; \
	cat build/test-llm-proxy.log; \
	test $$rest -eq 0 && test $$proxied -eq 0

# What the slow tests need beyond backroom's own dependencies: LiteLLM's proxy, in a
# virtual environment of its own (build/litellm-venv, from tests/llm_proxy/*.txt; a
# no-op while its pins are unchanged). Installed here, not inside the test session.
test-deps: $(STAMP)
	$(PY) tests/llm_proxy/litellm_install.py

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

# backroom beside PgQueuer, Procrastinate, Celery, Dramatiq, SAQ, arq, RQ and huey, each
# pinned in bench/peers/requirements.txt and installed into a venv of its own (with
# backroom, editable). `make bench-peers` rewrites its section of docs/benchmarks.md and
# docs/benchmarks-peers.png. The committed figures: PEERS_JOBS=2000 PEERS_SAMPLES=50 (11 min
# at load 3-10); at 10,000 RQ alone (a fork per job) takes over 15 min a round.
PEERS_VENV := build/peers-venv
PEERS_PY := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed
PEERS_JOBS ?= 10000
PEERS_SAMPLES ?= 100

$(PEERS_STAMP): bench/peers/requirements.txt pyproject.toml
	python3 -m venv $(PEERS_VENV)
	$(PEERS_PY) -m pip install --quiet -r bench/peers/requirements.txt -e .
	touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_PY) -m bench.peers.run --jobs $(PEERS_JOBS) --samples $(PEERS_SAMPLES) --docs

# CI's run of the same harness, small, so that it never rots: every system must give
# every figure (no timing is checked).
bench-peers-smoke: $(PEERS_STAMP)
	$(PEERS_PY) -m bench.peers.run --jobs 300 --rounds 1 --samples 5 \
		--out build/peers-smoke --check

clean:
	rm -rf $(VENV) build/peers-venv .pytest_cache .mypy_cache .ruff_cache
