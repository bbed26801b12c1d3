# One command per task, used by people and by .ci/run alike.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# axe-core (npm) for the console's accessibility test: installed by `make test` from the npm
# registry when npm is there; the test skips, saying so, without it.
AXE := .cache/npm/node_modules/axe-core/axe.min.js
AXE_VERSION := 4.10.3

.PHONY: install system-deps serve test check bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch first, never CUDA's (PyPI's own Linux wheel pulls gigabytes of
	# nvidia-* packages): PyTorch's CPU index where it can be reached, else the configured
	# indexes when pip's dry-run resolution there has no CUDA package (this project's machines
	# keep a CPU wheel in /opt/wheels), else it stops and says how to get the CPU wheel.
	$(BIN)/python scripts/cpu-torch $(BIN)/pip 2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# LibreOffice, tesseract, ffmpeg, espeak-ng from Debian when missing (see the script).
system-deps:
	scripts/system-deps

serve: $(STAMP) system-deps
	$(BIN)/lore serve

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: check system-deps $(AXE)
	$(BIN)/pytest -q

$(AXE):
	command -v npm >/dev/null && npm install --silent --no-audit --no-fund \
		--prefix .cache/npm axe-core@$(AXE_VERSION) || echo "npm not found: no accessibility test"

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest_bench.py
	$(BIN)/python benchmarks/resolve_bench.py
	$(BIN)/python benchmarks/documents_eval.py
	$(BIN)/python benchmarks/crawl_bench.py
	$(BIN)/python benchmarks/spa_eval.py
	$(BIN)/python benchmarks/agent_context_bench.py

clean:
	rm -rf $(VENV) .lore .cache .pytest_cache .mypy_cache .ruff_cache
