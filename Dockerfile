# jaxjudge: one image for the web app and the grading workers (docker-compose.yml).
# Debian (bookworm), the pinned Python runtime, bubblewrap for the sandboxes.
FROM python:3.11.7-slim-bookworm

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 jaxjudge

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
