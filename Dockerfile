# jaxjudge: one image for the web app and the grading workers (docker-compose.yml).
# Debian, Python 3.12 or 3.13 (the jax 0.12 runtime needs one) with the pinned packages
# in a virtualenv, bubblewrap for the sandboxes, git (and CA certificates) for courses'
# repositories of problems (app/grading/problem_pulls.py). The base is the official Python image
# unless BASE_IMAGE names another Debian image with a python3 that recent: `make
# containers-test` builds on Debian trixie (python3 3.13) made by mmdebstrap from
# Debian's packages.
ARG BASE_IMAGE=python:3.12-slim-bookworm
FROM ${BASE_IMAGE}

# Debian's python3 and venv only where the base has no Python of its own. The
# virtualenv works on both bases (Debian's python refuses system-wide pip installs).
RUN apt-get update \
 && packages="bubblewrap xmlsec1 git ca-certificates" \
 && if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then packages="$packages python3 python3-venv"; fi \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv \
 && useradd --create-home --uid 1000 jaxjudge
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /app
# Dependencies first (pinned in pyproject.toml), so code changes reuse this layer.
COPY pyproject.toml README.md ./
COPY app/__init__.py app/__init__.py
COPY grader/__init__.py grader/__init__.py
# The light client: `jaxjudge submit` uses it, and notebooks get it as a wheel from here.
COPY clients/python clients/python
RUN pip install --no-cache-dir -e . -e ./clients/python

COPY app app
COPY grader grader
COPY migrations migrations
COPY problems problems
COPY reference_solutions reference_solutions
COPY templates templates
COPY static static

# Data (caches, trusted outputs) lives in a volume; the database is PostgreSQL's.
ENV JAXJUDGE_DATA_DIR=/data
RUN mkdir -p /data && chown jaxjudge:jaxjudge /data
USER jaxjudge
EXPOSE 8000
CMD ["jaxjudge", "serve", "--host", "0.0.0.0", "--port", "8000"]
