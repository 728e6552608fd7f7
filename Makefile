# Two commands for a newcomer: `make run` (serve the demo floor) and `make test` (the whole suite on
# PostgreSQL and Redis). `make lint` is the style, type and layers gate CI also runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/jackpot
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
# The suite's processes (pytest-xdist): each has its own test database and Redis keys; the drills
# run one after the other on one of them (tests/conftest.py). Most of a test's time is waiting on
# PostgreSQL, a subprocess or a browser, so more processes than cores pay.
TEST_WORKERS ?= 4
# The suite keeps its bytecode (__pycache__, ignored by git) even where the environment says
# PYTHONDONTWRITEBYTECODE, as this machine's does: pytest rewrites the asserts of ~500 modules (the
# tests and the packages of the hypothesis and schemathesis plugins) in every process, and without
# a cache it does so on every run, 15 s of CPU a process to collect instead of 8.

.PHONY: install run test lint bench clean cluster cluster-down

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The embedded default: SQLite and eager tasks, unless DATABASE_URL / REDIS_URL are set; with
# REDIS_URL a Celery worker with beat runs beside the server (var/worker.log). The server
# runs in the background (var/server.log) and the floor simulator in the foreground, so its
# progress bar shows the meter climbing; one Ctrl-C stops the simulator between rounds, then the
# server (the EXIT trap).
run: install
	$(BIN)/python manage.py migrate --no-input
	@mkdir -p var
	set -o pipefail; $(BIN)/python manage.py seed_demo --json | tee var/demo-floor.json
	@echo "Demo floor (with the terminals' and staff tokens) saved in var/demo-floor.json"
	@pool=$$($(BIN)/python -c "import json; print(json.load(open('var/demo-floor.json'))['pools'][0]['id'])"); \
	printf '\n  %-18s %s\n  %-18s %s\n  %-18s %s\n  %-18s %s\n\n' \
		"the jackpot sign" "http://127.0.0.1:8000/display/$$pool/  (?lang=en for English)" \
		"the award queue" "http://127.0.0.1:8000/floor/awards/  (supervisor1 or 2, passwords above)" \
		"the API, its docs" "http://127.0.0.1:8000/api/docs/" \
		"the admin" "http://127.0.0.1:8000/admin/  (user admin, the password above)"
	@$(BIN)/python manage.py runserver --noreload 127.0.0.1:8000 > var/server.log 2>&1 & server=$$!; \
	worker=; if [ -n "$$REDIS_URL" ]; then \
		DJANGO_SETTINGS_MODULE=config.settings.local $(BIN)/celery -A config worker --beat \
			--schedule var/celerybeat-schedule --loglevel=INFO > var/worker.log 2>&1 & worker=$$!; \
		echo "A Celery worker and beat run beside it (log: var/worker.log)."; \
	fi; \
	trap 'kill $$server $$worker 2>/dev/null' EXIT; \
	echo "Serving http://127.0.0.1:8000 (log: var/server.log). The floor simulator plays a round a"; \
	echo "second on the demo tables through the API; Ctrl-C stops both."; \
	status=0; $(BIN)/python manage.py simulate_floor --tables 6 --rounds 100000 --rate 1 --wait 60 \
		|| status=$$?; \
	if [ $$status -eq 130 ]; then exit 0; fi; \
	echo "The floor simulator has stopped; the server still serves. Ctrl-C to stop it."; \
	wait $$server

test: install
	@DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" \
		deploy/dev/ensure-services.sh
	@deploy/dev/ensure-browser.sh
	@deploy/dev/ensure-packages.sh
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" \
		PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

# The production topology on this machine: nginx, the terminals' gunicorn instance and two others,
# pgbouncer (transaction pooling), PostgreSQL, its own Redis (with an ACL), a Celery worker and
# beat, an anchor of the journal; logs and pids in var/cluster/ (docs/operations.md "Topology";
# deploy/cluster/up.sh lists what can be set). Idempotent.
cluster: install
	deploy/cluster/up.sh

# Stops exactly what `make cluster` started, its Redis too (PostgreSQL stays up).
cluster-down:
	deploy/cluster/down.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --strict rules
	$(BIN)/lint-imports --no-logo

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache .hypothesis .import_linter_cache
