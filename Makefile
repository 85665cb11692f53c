# Two commands: `make run` and `make test`. Both bootstrap .venv from pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-window lint layers bench samples package package-smoke install-desktop icons clean

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
	@$(BIN)/dpstudio sample:survey || [ $$? -eq 1 ]

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q
	$(BIN)/ruff check dpstudio tests benchmarks packaging
	$(BIN)/lint-imports

# Focus, Tab and shortcuts in a real window (X server), which offscreen rendering does not
# show: tests/ui/test_real_window.py, skipped by `make test`. Needs xvfb-run (apt-get
# install xvfb).
test-window: $(STAMP)
	xvfb-run -a -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/ui/test_real_window.py

lint: $(STAMP)
	$(BIN)/ruff check dpstudio tests benchmarks packaging

layers: $(STAMP)
	$(BIN)/lint-imports

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/engine.py

samples: $(STAMP)
	$(BIN)/python dpstudio/resources/samples/make_samples.py

# The standalone desktop application (packaging/README.md): dist/dpstudio/ and its
# .tar.gz. PyInstaller is a build tool, installed here only, not a dependency of DP Studio.
PYINSTALLER := $(VENV)/.pyinstaller
$(PYINSTALLER): $(STAMP)
	@$(PIP) install 'pyinstaller>=6.10'
	@touch $@

package: $(PYINSTALLER)
	$(BIN)/python packaging/build_bundle.py

# Starts the frozen executable (--version, --screenshot, a query); run after `make package`.
package-smoke: $(STAMP)
	$(BIN)/python packaging/smoke.py dist/dpstudio

# Launcher, icons, .dpstudio MIME type and metainfo under ~/.local/share, for this user.
install-desktop: $(STAMP)
	$(BIN)/dpstudio --install-desktop

# Re-render dpstudio/resources/icons/dpstudio-*.png after editing dpstudio.svg.
icons: $(STAMP)
	$(BIN)/python packaging/render_icons.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
