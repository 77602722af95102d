# Everything runs from .venv, which the first target you call creates and fills.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp
MANAGE := $(BIN)/python manage.py
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint format worker beat bench schemathesis clean

$(STAMP): requirements.txt requirements-dev.txt
	@bash scripts/system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(MANAGE) migrate --noinput
	$(MANAGE) ensure_demo_users
	$(MANAGE) runserver $(HOST):$(PORT)

test: install
	$(BIN)/pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

worker: install
	$(BIN)/celery -A shorturl_project worker --loglevel=info

beat: install
	$(BIN)/celery -A shorturl_project beat --loglevel=info --schedule=$(VENV)/celerybeat-schedule

bench: install
	$(BIN)/python bench/redirect_bench.py

clean:
	rm -rf $(VENV) staticfiles test-artifacts
