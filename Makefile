# Two commands: `make run` and `make test`. Both bootstrap .venv from pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint layers bench samples clean

# pip, told to print errors only: its warnings (unreachable extra indexes in a pip.conf,
# setuptools' notes on building an editable install, a newer pip) are not the analyst's
# concern on a first run, and used to fill about 90 lines. An error still prints.
PIP := PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PYTHONWARNINGS=ignore \
       $(BIN)/python -m pip --quiet --quiet

# Rebuild the environment when pyproject.toml changes (the stamp is older than it).
# `make run VENV=/some/where` builds (or reuses) another environment, e.g. to try a first run.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "DP Studio needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	@echo "Setting up $(VENV) with DP Studio and its dependencies (once; a minute or two)…"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(PIP) install --upgrade pip
	@$(PIP) install -e '.[dev]'
	@touch $(STAMP)
	@echo "Ready."

# Exit status 1 is "no display": DP Studio has already said so in one line.
run: $(STAMP)
	@$(BIN)/dpstudio resources/samples/survey.csv || [ $$? -eq 1 ]

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q
	$(BIN)/ruff check dpstudio tests benchmarks resources packaging
	$(BIN)/lint-imports

lint: $(STAMP)
	$(BIN)/ruff check dpstudio tests benchmarks resources packaging

layers: $(STAMP)
	$(BIN)/lint-imports

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/engine.py

samples: $(STAMP)
	$(BIN)/python resources/samples/make_samples.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
