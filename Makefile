# buzz membership: development tasks. `make` alone lists them.
# Each target installs what it needs first (scripts/setup is a quick no-op once done), so
# `make demo` and `make test` work on a fresh Debian 12 machine from a fresh clone.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV       := .venv
PY         := $(VENV)/bin/python
PYTEST     := $(VENV)/bin/pytest
ALEMBIC    := $(VENV)/bin/alembic
BUZZ_ADMIN := $(VENV)/bin/buzz-admin
RUFF       := $(VENV)/bin/ruff
PSQL       := psql -X -q -v ON_ERROR_STOP=1
PG_PROVE   := pg_prove
# The local cluster (buzz_signer/localdb.py): under .buzz/pg, or $BUZZ_LOCAL_DB.
LOCALDB    := $(PY) -m buzz_signer.localdb
# For stopping/removing it even without .venv (localdb needs only the standard library then).
LOCALDB_ANY = $(if $(wildcard $(PY)),$(PY),python3) -m buzz_signer.localdb
# The test suites' own clusters (docs/testing.md), apart from the one under .buzz/pg that the
# demo and the relay keep their data in: in memory (tmpfs, /dev/shm) where there is one, since
# every test creates and drops a database, a thousand files each time, and on this machine's
# ext4 disk creating them became 15 times slower as deletions piled up; under .buzz/test otherwise.
TEST_ROOT ?= $(shell if [ -d /dev/shm ] && [ -w /dev/shm ]; then \
  echo "/dev/shm/buzz-test-$$(printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)"; \
  else echo '$(CURDIR)/.buzz/test'; fi)
TEST_LOCALDB     = BUZZ_LOCAL_DB='$(TEST_ROOT)/pg' $(LOCALDB)
TEST_LOCALDB_ANY = BUZZ_LOCAL_DB='$(TEST_ROOT)/pg' $(LOCALDB_ANY)

DB       := buzz
DEMO_DB  := buzz_demo
PGTAP_DB := buzz_pgtap
# BIP-340's test vectors 0-14, as the npm package bip-schnorr ships them (tests/node).
BIP340_VECTORS := tests/node/node_modules/bip-schnorr/test/test-vectors-schnorr.json
PYTEST_ARGS ?=
# pytest-xdist workers for the Python suites, one per core of the machines this runs on; 0
# runs them in one process (docs/testing.md).
TEST_WORKERS ?= 2

.PHONY: help setup db db-stop db-status migrate demo relay test pgtap pytest lint clean
.PHONY: test-db test-db-stop
.PHONY: citus citus-db citus-stop test-citus test-clean

help: ## list the targets
	@echo "make TARGET, where TARGET is one of:"
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) \
	  | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

setup: ## install what is missing: Debian packages (PostgreSQL 15, pgTAP, pg_prove, plpgsql_check) and .venv
	@bash scripts/setup

db: setup ## start the local PostgreSQL cluster in .buzz/pg (created on first use)
	@$(LOCALDB) start

db-stop: ## stop the local PostgreSQL cluster
	@$(LOCALDB_ANY) stop

db-status: ## say whether the local cluster runs, and its URL
	@$(LOCALDB_ANY) status || true

test-db: setup ## start the test suites' PostgreSQL cluster (in memory under /dev/shm where it can)
	@$(TEST_LOCALDB) start >/dev/null

test-db-stop: ## stop the test suites' PostgreSQL cluster
	@$(TEST_LOCALDB_ANY) stop 2>/dev/null || true

migrate: db ## migrate database 'buzz' in the local cluster to the newest revision (creating it if missing)
	@url="$$($(LOCALDB) create $(DB))"; \
	echo "migrate: $$url"; \
	DATABASE_URL="$$url" $(BUZZ_ADMIN) migrate

demo: db ## run the demo (buzz_signer.demo) against a new database 'buzz_demo'
	@url="$$($(LOCALDB) create --recreate $(DEMO_DB))"; \
	DATABASE_URL="$$url" $(PY) -m buzz_signer.demo

# make relay: buzz-relay on database 'buzz' with a demo community; keys kept under .buzz/.
RELAY_LISTEN ?= localhost:7447
RELAY_HOST   ?= localhost:7447
RELAY_KEY    := .buzz/relay.key
OWNER_KEY    := .buzz/demo-owner.key

relay: migrate ## buzz-relay on database 'buzz', demo community at ws://localhost:7447 (OWNER=npub... to own it)
	@export DATABASE_URL="$$($(LOCALDB) url $(DB))"; \
	[ -f $(RELAY_KEY) ] || $(BUZZ_ADMIN) keygen $(RELAY_KEY) >/dev/null; \
	if [ -z "$${OWNER:-}" ]; then \
	  [ -f $(OWNER_KEY) ] || $(BUZZ_ADMIN) keygen $(OWNER_KEY) >/dev/null; \
	  OWNER="$$($(PY) -c 'import sys; from buzz_signer.keys import RelayKey; print(RelayKey.from_file(sys.argv[1]).npub)' $(OWNER_KEY))"; \
	  echo "relay: the demo owner's secret key is in $(OWNER_KEY) (log in with it to request invites)"; \
	fi; \
	$(BUZZ_ADMIN) --key-file $(RELAY_KEY) community create $(RELAY_HOST) --owner "$$OWNER"; \
	echo "relay: point a Nostr client at ws://$(RELAY_HOST) (Ctrl-C stops)"; \
	exec $(VENV)/bin/buzz-relay --listen $(RELAY_LISTEN) --key-file $(RELAY_KEY)

test: lint pgtap pytest ## every test: ruff, pgTAP, then pytest

pgtap: test-db ## pgTAP tests: new database 'buzz_pgtap', alembic upgrade head, pg_prove tests/pgtap/*.sql
	@shopt -s nullglob; files=(tests/pgtap/*.sql); \
	if [ $${#files[@]} -eq 0 ]; then echo "pgtap: no tests/pgtap/*.sql to run" >&2; exit 1; fi; \
	url="$$($(TEST_LOCALDB) create --recreate $(PGTAP_DB))"; \
	DATABASE_URL="$$url" $(ALEMBIC) upgrade head; \
	$(PSQL) "$$url" -c 'CREATE EXTENSION IF NOT EXISTS pgtap' \
	                -c 'CREATE EXTENSION IF NOT EXISTS plpgsql_check' \
	                -c 'CREATE EXTENSION IF NOT EXISTS buzz_bip340_test_signer WITH SCHEMA public'; \
	$(PSQL) "$$url" -v vectors="$$(cat $(BIP340_VECTORS))" <<<"CREATE TABLE public.bip340_vectors AS \
	  SELECT n, lower(v.pk) AS pk, lower(v.m) AS m, lower(v.sig) AS sig, v.result, v.comment \
	  FROM ROWS FROM (json_to_recordset(:'vectors') AS (pk text, m text, sig text, result boolean, comment text)) \
	  WITH ORDINALITY AS v (pk, m, sig, result, comment, n)"; \
	eval "$$($(TEST_LOCALDB) env $(PGTAP_DB))"; \
	$(PG_PROVE) "$${files[@]}"

pytest: test-db ## Python tests (tests/python) on the test cluster; PYTEST_ARGS=... to pass options
	@BUZZ_TEST_ADMIN_URL="$$($(TEST_LOCALDB) url postgres)" $(PYTEST) -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: setup ## ruff over the Python (buzz_signer, tests, migrations, bench)
	@$(RUFF) check buzz_signer tests db/migrations bench

# The same system on a Citus cluster (docs/scale-out.md): a coordinator and two workers under
# $(TEST_ROOT)/citus (in memory, like the test cluster), on loopback ports from 55101. CITUS_SRC holds the Citus 13.2.2 source and its
# build.sh (third_party/citus/README.md); an installed Citus is used as it is.
CITUS_SRC ?= third_party/citus
# Two shards per table, one per worker (buzz_signer/localcitus.py says why).
CITUS_ENV  := BUZZ_LOCAL_CITUS='$(TEST_ROOT)/citus' BUZZ_CITUS_SHARD_COUNT=2
LOCALCITUS := $(CITUS_ENV) $(PY) -m buzz_signer.localcitus
# The suites that apply on a cluster (same files; what differs is marked single_server).
CITUS_TESTS ?= $(addprefix tests/python/test_,$(addsuffix .py, \
  citus membership_writes membership_guard roles concurrency role_concurrency ban_concurrency \
  quota_concurrency invite_quotas cli_quotas relay_moderation \
  stress faults hostile_input security membership_secrets async_membership bip340_extension \
  cli cli_roles relay_protocol relay_wire relay_gate relay_nip86 relay_management \
  relay_nostr_tools relay_nostr_sdk model extension_helpers member_profiles))

citus: setup ## build and install Citus into PostgreSQL 15 from CITUS_SRC, unless installed
	@if $(PY) -c 'import sys; from buzz_signer.localcitus import citus_installed; sys.exit(not citus_installed())'; then :; \
	elif [ -f "$(CITUS_SRC)/build.sh" ]; then bash "$(CITUS_SRC)/build.sh"; \
	else echo "citus: not installed, and no $(CITUS_SRC)/build.sh (set CITUS_SRC)" >&2; exit 1; fi

citus-db: citus ## start the test Citus cluster (coordinator and two workers, beside the test cluster)
	@$(LOCALCITUS) start

citus-stop: ## stop the test Citus cluster
	@$(LOCALCITUS) stop 2>/dev/null || true

test-clean: ## stop the test suites' clusters and remove them (in memory: they hold some 600 MB)
	@$(TEST_LOCALDB_ANY) destroy 2>/dev/null || true
	@if [ -x "$(PY)" ]; then $(LOCALCITUS) destroy 2>/dev/null || true; fi
	@rm -rf '$(TEST_ROOT)'

test-citus: citus-db ## the suites that apply, on the local Citus cluster (PYTEST_ARGS=... passes options)
	@export BUZZ_TEST_CITUS=1 $(CITUS_ENV); \
	$(PYTEST) -n $(TEST_WORKERS) -m 'not alone_on_server' $(CITUS_TESTS) $(PYTEST_ARGS); \
	$(PYTEST) -m alone_on_server $(CITUS_TESTS) $(PYTEST_ARGS) || [ $$? -eq 5 ]  # 5: none selected

# bench and soak: the local cluster started, and the bench extra (matplotlib) installed if missing.
.PHONY: bench bench-citus soak bench-deps
bench-deps: db
	@if ! $(PY) -c 'import matplotlib' >/dev/null 2>&1; then \
	  log="$$(mktemp)"; \
	  $(PY) -m pip install --disable-pip-version-check --no-input -q -e '.[test,bench]' >"$$log" 2>&1 \
	    || { cat "$$log" >&2; rm -f "$$log"; exit 1; }; \
	  rm -f "$$log"; \
	fi

bench: bench-deps ## benchmark membership writes, buzz-relay over the wire, the members-only gate, the state relay processes share, the community's page, the relay facing the internet, a database outage: bench/out/{bench,wire,gate,shared_state,page,facing,outage}.json
	@$(PY) -m bench.run $(BENCH_ARGS)
	@$(PY) -m bench.wire $(BENCH_ARGS)
	@$(PY) -m bench.gate $(BENCH_ARGS)
	@$(PY) -m bench.shared_state $(BENCH_ARGS)
	@$(PY) -m bench.page $(BENCH_ARGS)
	@$(PY) -m bench.facing $(BENCH_ARGS)
	@$(PY) -m bench.outage $(BENCH_ARGS)

bench-citus: bench-deps citus ## write throughput on a Citus cluster of one worker against two: bench/out/citus.json
	@$(PY) -m bench.citus $(BENCH_ARGS)

# make soak SOAK_MINUTES=2; SOAK_ARGS passes other options (python -m bench.soak --help).
SOAK_MINUTES ?= 10
SOAK_ARGS ?=
soak: bench-deps ## sustained writes for SOAK_MINUTES (10): does a write slow or a table grow? bench/out/soak.json
	@$(PY) -m bench.soak --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

clean: ## stop the local and test clusters and remove them and .buzz/ (every local database)
	@$(LOCALDB_ANY) destroy
	@$(TEST_LOCALDB_ANY) destroy
	@if [ -x "$(PY)" ]; then $(LOCALCITUS) destroy; fi
	@rm -rf '$(TEST_ROOT)'
	@rm -rf .buzz
