# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINTED := $(wildcard src tests perf examples)
# `langgraph dev` gets an environment of its own: its server pins jsonschema-rs<0.45 and protobuf<7, and
# the tests' schemathesis needs jsonschema-rs>=0.60.1 (see the `studio` extra in pyproject.toml).
STUDIO := .venv-studio
STUDIO_STAMP := $(STUDIO)/.installed
# The floors environment: every direct dependency of the core, [vision] and the provider SDKs at the lowest
# version pyproject.toml allows (uv's lowest-direct resolution), kept per pyproject.toml (see README).
FLOORS := .venv-extras/$(shell sha256sum pyproject.toml | cut -c1-12)/floors
FLOORS_STAMP := $(FLOORS)/.complete
FLOORS_EXTRAS := openai,anthropic,google,vision
FLOORS_TESTS := tests/agents tests/evaluators

.PHONY: install demo test test-quick test-studio test-floors studio lint perf clean

$(STAMP): pyproject.toml
	@echo "== building the development environment $(VENV) (every extra and the test tools; minutes)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned. Where a local CPU wheel of this version is offered (as on our dev and CI
	# machines) pip takes it; from PyPI on Linux the same spec pulls the CUDA build and its wheels.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	# the page tests' headless browser: Debian's chromium where apt is (tests skip with this hint without it)
	if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else echo "page tests need chromium: sudo apt-get install -y chromium"; fi; fi
	touch $(STAMP)

install: $(STAMP)

$(STUDIO_STAMP): pyproject.toml
	@echo "== building the LangGraph Studio environment $(STUDIO) (the studio extra and torch; minutes)"
	$(PYTHON) -m venv $(STUDIO)
	$(STUDIO)/bin/pip install --quiet --upgrade pip
	$(STUDIO)/bin/pip install --quiet torch==2.13.0
	$(STUDIO)/bin/pip install --quiet -e ".[studio]"
	$(STUDIO)/bin/pip check
	touch $(STUDIO_STAMP)

# Open the graphs in LangGraph Studio: make studio, then .venv-studio/bin/langgraph dev (docs/studio.md)
studio: $(STUDIO_STAMP)

demo: install
	$(BIN)/kinegraph demo

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

$(FLOORS_STAMP): pyproject.toml $(STAMP)
	@echo "== building the floors environment $(FLOORS) ([$(FLOORS_EXTRAS)] at their lowest allowed versions)"
	rm -rf $(FLOORS) && $(PYTHON) -m venv $(FLOORS)
	printf -- '-e .[$(FLOORS_EXTRAS)]\npytest>=8\npytest-timeout>=2.3\n' > $(FLOORS)/requirements.in
	$(BIN)/uv pip compile --quiet --resolution lowest-direct --python $(FLOORS)/bin/python \
	  $(FLOORS)/requirements.in -o $(FLOORS)/requirements.txt
	$(BIN)/uv pip sync --quiet --python $(FLOORS)/bin/python $(FLOORS)/requirements.txt
	touch $(FLOORS_STAMP)

# The provider and scoring tests on the lowest versions pyproject.toml allows
test-floors: $(FLOORS_STAMP)
	@echo "== provider and scoring tests at the dependency floors"
	$(FLOORS)/bin/python -m pytest -q -m "not slow" $(FLOORS_TESTS)

# CI runs the `langgraph dev` test and the floors tests too, each in its environment built beside this one
test: lint studio test-floors
	@echo "== the whole suite (slow tests included: they build and cache .venv-extras/ environments)"
	$(BIN)/pytest -q

test-quick: lint
	$(BIN)/pytest -q -m "not slow"

# Only the Studio tests, with their environment built first
test-studio: lint studio
	$(BIN)/pytest -q tests/studio

perf: install
	for f in perf/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(STUDIO) .venv-extras build dist src/*.egg-info .pytest_cache .ruff_cache .langgraph_api
