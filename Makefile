# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINTED := $(wildcard src tests perf examples)

.PHONY: install demo test test-quick lint perf clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned. Where a local CPU wheel of this version is offered (as on our dev and CI
	# machines) pip takes it; from PyPI on Linux the same spec pulls the CUDA build and its wheels.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/kinegraph demo

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

test: lint
	$(BIN)/pytest -q

test-quick: lint
	$(BIN)/pytest -q -m "not slow"

perf: install
	for f in perf/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
