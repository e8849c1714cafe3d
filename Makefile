# gobtui: `make run` opens the dashboard, `make test` runs the whole suite.
# Every target creates .venv on first use; nothing needs a manual step.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

# bench/ and screenshots/ are folders too: without this, make calls those targets done.
.PHONY: run demo lint test bench screenshots clean

# `make run` installs what running needs; the other targets add the test tools.
$(RUN_STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "python3 (>= 3.11) is required"; exit 1; }
	$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# -qq: errors still show; setuptools' banner on every editable install does not
	$(BIN)/python -m pip install --quiet --quiet -e .
	@touch $(RUN_STAMP)

$(DEV_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet --quiet -e '.[dev]'
	@touch $(DEV_STAMP)

run: $(RUN_STAMP)
	$(BIN)/gobtui --auto-demo

demo: $(RUN_STAMP)
	$(BIN)/gobtui --demo

lint: $(DEV_STAMP)
	$(BIN)/ruff check core adapters gobtui tests bench screenshots
	$(BIN)/ruff format --check core adapters gobtui tests bench screenshots
	$(BIN)/mypy

test: lint
	@command -v npm >/dev/null || echo "note: npm is not on PATH, so the real-client suite (tests/e2e) is skipped"
	$(BIN)/pytest -n auto --dist loadfile -p no:cacheprovider

bench: $(DEV_STAMP)
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.more

screenshots: $(DEV_STAMP)
	$(BIN)/python screenshots/render.py screenshots

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
