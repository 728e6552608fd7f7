# Two commands for a newcomer: `make run` (serve the demo floor) and `make test` (the whole suite on
# PostgreSQL and Redis). `make lint` is the style and type gate CI also runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/jackpot
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: install run test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The embedded default: SQLite and eager tasks, unless DATABASE_URL / REDIS_URL are set.
run: install
	$(BIN)/python manage.py migrate --no-input
	@mkdir -p var
	set -o pipefail; $(BIN)/python manage.py seed_demo --json | tee var/demo-floor.json
	@echo "Demo floor (with the terminals' and staff tokens) saved in var/demo-floor.json"
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: install
	@DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" \
		deploy/dev/ensure-services.sh
	@deploy/dev/ensure-browser.sh
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" \
		$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --strict tables/rules

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache .hypothesis
