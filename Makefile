# The two commands a newcomer needs: `make run` and `make test`.
# Both create or refresh .venv from pyproject.toml by themselves.

# The grading runtime (jax 0.12) needs Python 3.12 or 3.13: the first interpreter found
# of python3.12, python3.13, python3 and pyenv's installed versions.
PYTHON ?= $(shell for p in python3.12 python3.13 python3 $$(ls -d $$HOME/.pyenv/versions/3.1[23].*/bin/python3 2>/dev/null); do \
  $$p -c 'import sys; sys.exit(sys.version_info[:2] not in ((3, 12), (3, 13)))' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast check lint typecheck pytest venv system-deps bench bench-tools editor screenshots containers-test gpu-image clean

# axe-core checks every page's accessibility in the browser test
# (tests/e2e/test_accessibility.py): installed from npm once, never fetched at run time.
AXE := var/axe/node_modules/axe-core/axe.min.js
venv: system-deps $(STAMP) $(AXE)

# Debian packages: bubblewrap sandboxes every submission; chromium runs the
# browser test (Playwright drives it; no browser is ever downloaded); postgresql
# is the database jaxjudge scales on, and the tests start a real server of it; xmlsec1
# signs and verifies SAML messages (pysaml2 calls it).
DEBIAN_PACKAGES := bubblewrap chromium postgresql npm xmlsec1
system-deps:
	@missing=""; command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	command -v xmlsec1 >/dev/null 2>&1 || missing="$$missing xmlsec1"; \
	{ command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || missing="$$missing postgresql"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  elif ! command -v bwrap >/dev/null 2>&1; then \
	    echo "jaxjudge needs bubblewrap: run 'sudo apt-get install bubblewrap' (and chromium for the browser test)"; exit 1; \
	  else \
	    echo "note:$$missing missing: 'sudo apt-get install$$missing' (the browser test is skipped without chromium; the PostgreSQL tests fail without postgresql)"; \
	  fi; \
	fi

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -n "$(PYTHON)" || { echo "jaxjudge needs Python 3.12 or 3.13 (jax 0.12 does): install one (Debian 13: apt-get install python3; or pyenv install 3.12)"; exit 1; }
	@# A virtualenv of another Python (3.11, before the jax 0.12 runtime) is made again.
	@$(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] not in ((3, 12), (3, 13)))' 2>/dev/null || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./clients/python -e '.[dev]'
	@# The notebook test's kernel runs in a fresh virtual environment with only the
	@# light client and ipykernel (no jax), installed offline from these wheels.
	$(BIN)/python -m pip download --quiet --dest var/wheelhouse ipykernel==7.4.0
	@touch $@

$(AXE):
	npm install --silent --prefix var/axe --no-audit --no-fund --no-save axe-core@4.14.1

# The platform on its embedded default: SQLite in var/, warm sandboxed workers. It serves
# at once; the trusted runs go on in the background (references first; /admin/workers).
run: venv
	$(BIN)/jaxjudge serve --host 127.0.0.1 --port 8000

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy

# The 40 slowest tests' times close every run (CI's log too): where the suite's
# minutes go (issue 42: make test in 15 minutes).
pytest: venv
	$(BIN)/pytest -n 2 --dist loadgroup --durations=40

# Seconds, not minutes: no grading child, no server, no browser (the markers are
# enforced by tests/conftest.py). For the edit-test loop; `make test` runs everything.
test-fast: venv
	$(BIN)/pytest -n 2 --dist loadgroup -m "not sandbox and not server and not browser"

# Rebuild the committed editor bundle (needs Node and npm; running the platform does not).
editor:
	web/editor/build.sh

# Retake the README's screenshots with the browser test.
screenshots: venv
	JAXJUDGE_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/pytest -p no:xdist tests/e2e

# wrk, the C load generator of the hot-reads benchmark (Debian's package; not needed by
# `make run` or `make test`).
bench-tools:
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages: wrk"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	  else echo "make bench needs wrk: run 'sudo apt-get install wrk'"; exit 1; fi; }

# Measured numbers into docs/performance.md (about 38 minutes on 2 cores: 8 for submit latency, 14 for grading latency over every problem, 2 for API load, 2 for the hot reads under wrk, 3 sustained, 8 for the whole bank's trusted runs from a cold cache, 1 for a waiting child's memory).
bench: venv bench-tools
	$(BIN)/python -m bench.submit_latency --write
	$(BIN)/python -m bench.grading_latency --write
	$(BIN)/python -m bench.api_load --write
	$(BIN)/python -m bench.hot_reads --write
	$(BIN)/python -m bench.sustained --write
	$(BIN)/python -m bench.bank_preparation --write
	$(BIN)/python -m bench.check_time --write
	$(BIN)/python -m bench.child_memory --write

# docker-compose.yml started for real with podman and podman-compose (root, Debian; not
# part of `make test`): images built from Debian's packages, two verdicts through the API,
# a worker killed mid-grading (docs/deployment.md, "Containers"). ARGS: --keep,
# --remove-images, --rebuild-base, --suite=bookworm|trixie.
containers-test: venv
	$(BIN)/python deploy/containers_test.py $(ARGS)

# The GPU worker image, jaxjudge-gpu:local: the image above plus jax's CUDA 13 plugin at
# the pinned jax (deploy/containers/gpu.Containerfile); builds without a GPU, runs with one.
gpu-image: venv
	$(BIN)/python deploy/containers_test.py --gpu-image

test: lint typecheck pytest

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
