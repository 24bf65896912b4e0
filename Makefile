# Two entry points (see README): `make audit` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: audit test gate bench order-check lint engine-alone setup data lock clean-cache

audit: setup  ## reproduce both documents, print the claims table, write report/
	$(BIN)/pytest claims -n auto -m "claim or health" $(PYTEST_ARGS)

# The audit's folder (claims/: claims, health, properties) and the harness's own tests
# (tests/: cache, faults, report, scheduling, ...) and the engine's (engine/tests/), in one run;
# the slow gates are skipped.
test: setup  ## the suite: claims/ and tests/ (claims, health, properties, faults; the slow gates: make gate)
	@$(BIN)/pytest claims tests engine/tests -n auto $(PYTEST_ARGS); status=$$?; \
		echo "make test skips the slow gates (cold audits in two float orders, cold reruns): run them with make gate"; \
		exit $$status

gate: setup  ## the slow gates: the audit in another float order gives the same verdicts; cold reruns are bit-identical
	$(BIN)/pytest claims tests -n auto -m gate $(PYTEST_ARGS)

bench: setup  ## time the fast paths, sweeps and audit against their targets: report/bench.json
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

# The audit again in another valid float order (128-bit vectors, lib/numerics.py): it must pass
# and give every claim report/audit.json's verdict (docs/VERDICTS.md).
order-check: setup  ## the audit with 128-bit vectors: passes, with report/audit.json's verdicts
	XLA_FLAGS="$$($(BIN)/python -c 'from uncertainty_claims.numerics import NARROW_VECTORS_FLAG; print(NARROW_VECTORS_FLAG)')" \
		PYTHON=$(BIN)/python WORKERS=auto scripts/gpu_check.sh report/audit.json report/narrow-vectors

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

engine-alone:  ## the engine alone (no JAX) in a fresh venv: its tests (engine/tests), docs/ADDING_A_DOCUMENT.md's example, the starter
	PYTHON=$(PYTHON) bash scripts/engine_alone.sh

setup: $(VENV)/.installed data

# The pinned stack: exact versions with hashes (requirements.lock, `make lock`), then the
# engine (engine/, the claim-audit distribution) and this package, resolving nothing further.
$(VENV)/.installed: pyproject.toml engine/pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e engine -e .
	touch $@

lock:  ## re-record requirements.lock from pyproject.toml (see docs/PINNED_STACK.md)
	$(PYTHON) -m venv .cache/lock-venv
	.cache/lock-venv/bin/python -m pip install --quiet pip-tools==7.6.2
	.cache/lock-venv/bin/pip-compile --quiet --generate-hashes --extra test --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file requirements.lock pyproject.toml

data: $(VENV)/.installed  ## Fashion-MNIST from Debian, CLAIMS_DATA_DIR or a download (docs/DATA.md)
	CLAIMS_PYTHON=$(BIN)/python bash scripts/setup_data.sh

clean-cache:
	rm -rf .cache
