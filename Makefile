# lakecdc: `make test` and `make demo` do the whole set-up on a fresh Debian machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test test-fast test-unit test-conformance lint demo bench soak soak-silver soak-snapshots services-up \
	services-down clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Unit and integration tests; PostgreSQL and MariaDB are installed when missing, started on loopback
# as throwaway instances and stopped afterwards whatever the result. TEST_WORKERS pytest-xdist workers run
# test files in parallel, each against a set of servers of its own (tests/conftest.py).
TEST_WORKERS ?= 2
PARALLEL := -n $(TEST_WORKERS)
SERVICES := LAKECDC_SERVICE_SETS=$(TEST_WORKERS) scripts/services.sh
test: $(STAMP)
	scripts/services.sh install
	$(SERVICES) up
	set -a; eval "$$($(SERVICES) env)"; set +a; \
	CI=$${CI:-1} $(PY) -m pytest tests $(PARALLEL) --durations=40; rc=$$?; scripts/services.sh down; exit $$rc

# Only the differential suite against the real Debezium 3.6.3 (docs/conformance.md; part of `make test`).
test-conformance: $(STAMP)
	scripts/services.sh install
	scripts/services.sh up
	set -a; eval "$$(scripts/services.sh env)"; set +a; \
	CI=$${CI:-1} $(PY) -m pytest tests/conformance; rc=$$?; scripts/services.sh down; exit $$rc

# The inner loop: everything but the tests marked slow (`make test` runs them all).
test-fast: $(STAMP)
	scripts/services.sh install
	$(SERVICES) up
	set -a; eval "$$($(SERVICES) env)"; set +a; \
	CI=$${CI:-1} $(PY) -m pytest tests $(PARALLEL) -m "not slow" --durations=10; rc=$$?; scripts/services.sh down; \
	exit $$rc

test-unit: $(STAMP)
	$(PY) -m pytest -m unit tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .

demo: $(STAMP)
	$(VENV)/bin/lakecdc demo

# Every benchmark in bench/ (figures and medians printed; peers such as dlt installed from the bench extra).
BENCHES := engine events landing ddl merge dbt_build latency quality postgres mariadb kafka
bench: $(STAMP)
	$(PY) -m pip install -q -e '.[dev,bench]'
	scripts/services.sh install
	scripts/services.sh up
	set -a; eval "$$(scripts/services.sh env)"; set +a; rc=0; \
	for b in $(BENCHES); do echo "== bench/$$b.py"; $(PY) bench/$$b.py || rc=1; done; \
	scripts/services.sh down; exit $$rc

# Long kill -9 runs against real PostgreSQL and MariaDB (SOAK_MINUTES per source), bronze compared to the source.
SOAK_MINUTES ?= 10
soak: $(STAMP)
	scripts/services.sh install
	scripts/services.sh up
	set -a; eval "$$(scripts/services.sh env)"; set +a; rc=0; \
	$(PY) bench/soak.py --minutes $(SOAK_MINUTES) || rc=1; \
	scripts/services.sh down; exit $$rc

# Issue 17's randomized end-to-end scenario, long form: seeds SOAK_SEEDS first, then more until SOAK_MINUTES,
# sizes of tests/integration/project/test_e2e_random.py times SOAK_SCALE; every silver table compared exactly with its source.
SOAK_SEEDS ?= 1,2,3
SOAK_SCALE ?= 4
soak-silver: $(STAMP)
	scripts/services.sh install
	scripts/services.sh up
	set -a; eval "$$(scripts/services.sh env)"; set +a; rc=0; \
	$(PY) bench/soak.py --silver --minutes $(SOAK_MINUTES) --seeds $(SOAK_SEEDS) --scale $(SOAK_SCALE) || rc=1; \
	scripts/services.sh down; exit $$rc

# Issue 16's scale: the incremental, read-only and blocking snapshot kill tests with SOAK_SNAPSHOT_ROWS rows per
# table (make test runs them with 6,000-20,000).
SOAK_SNAPSHOT_ROWS ?= 200000
soak-snapshots: $(STAMP)
	scripts/services.sh install
	scripts/services.sh up
	set -a; eval "$$(scripts/services.sh env)"; set +a; rc=0; \
	CI=1 LAKECDC_SNAPSHOT_ROWS=$(SOAK_SNAPSHOT_ROWS) $(PY) -m pytest -p no:randomly -q \
	  tests/integration/postgres/test_pg_incremental.py tests/integration/mysql/test_mysql_incremental.py \
	  -k snapshot_while_rows_change || rc=1; \
	scripts/services.sh down; exit $$rc

services-up:
	scripts/services.sh install && scripts/services.sh up

services-down:
	scripts/services.sh down

clean:
	rm -rf warehouse target dbt_packages logs reports demo
