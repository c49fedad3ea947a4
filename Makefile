# The two commands a newcomer needs: `make run` and `make test`.
# Both create or refresh .venv from pyproject.toml by themselves.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint typecheck pytest venv system-deps bench clean

venv: system-deps $(STAMP)

# bubblewrap sandboxes every submission. Installed when missing and we are root.
system-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (Debian package)"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "jaxjudge needs bubblewrap: run 'sudo apt-get install bubblewrap' (or your system's equivalent)"; exit 1; \
	  fi; }

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "jaxjudge needs Python 3.11; found " + sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

# The platform on its embedded default: SQLite in var/, warm sandboxed workers.
run: venv
	$(BIN)/jaxjudge prepare
	$(BIN)/jaxjudge serve --host 127.0.0.1 --port 8000

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy

pytest: venv
	$(BIN)/pytest -n 2 --dist loadgroup

bench: venv
	$(BIN)/python bench/grading_latency.py --write

test: lint typecheck pytest

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
