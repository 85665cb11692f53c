# Two commands: `make run` and `make test`. Both bootstrap .venv from pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint layers bench samples clean

# Rebuild the environment when pyproject.toml changes (the stamp is older than it).
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "DP Studio needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

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
