# Two entry points (see README): `make audit` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: audit test lint setup data clean-cache

audit: setup  ## reproduce both documents, print the claims table, write report/
	$(BIN)/pytest claims -n auto -m "claim or health" $(PYTEST_ARGS)

test: setup  ## the whole suite: claims, health, properties, faults
	$(BIN)/pytest claims -n auto $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

setup: $(VENV)/.installed data

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

data: $(VENV)/.installed  ## Fashion-MNIST from Debian, CLAIMS_DATA_DIR or a download (docs/DATA.md)
	CLAIMS_PYTHON=$(BIN)/python bash scripts/setup_data.sh

clean-cache:
	rm -rf .cache
