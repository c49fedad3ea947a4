"""The container files, validated statically, in every `make test`. The stack itself is
started and exercised by `make containers-test` (podman, images built from Debian's
packages: deploy/containers_test.py), which `make test` does not run."""

from __future__ import annotations

import re

import yaml  # type: ignore[import-untyped]  # (flax depends on PyYAML; no stubs pinned)

from app.core.config import PROJECT_ROOT, WebSettings

COMPOSE = yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (PROJECT_ROOT / "Dockerfile").read_text()
SANDBOX_OPTIONS = {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}


def test_the_stack_is_postgresql_the_web_app_and_two_workers_sharing_only_the_database() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"db", "web", "worker-1", "worker-2"}
    assert services["db"]["image"].startswith("postgres:")
    assert "healthcheck" in services["db"]
    assert services["web"]["command"][:2] == ["jaxjudge", "serve"]
    assert services["web"]["command"][-2:] == ["--workers", "0"]  # grading is the workers'
    volumes = set()
    for name in ("worker-1", "worker-2"):
        worker = services[name]
        assert worker["command"][:2] == ["jaxjudge", "worker"]
        assert worker["build"] == "."
        assert worker["depends_on"]["db"]["condition"] == "service_healthy"
        assert set(worker["security_opt"]) == SANDBOX_OPTIONS
        (volume,) = worker["volumes"]
        volumes.add(volume.split(":")[0])
        assert worker["environment"]["JAXJUDGE_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert len(volumes) == 2 and "web-data" not in volumes  # nothing of the web server's
    assert "security_opt" not in services["web"]  # only sandboxes need the exceptions


def test_every_setting_the_compose_file_names_exists() -> None:
    named = set(
        re.findall(
            r"^\s+(JAXJUDGE_[A-Z_]+):", (PROJECT_ROOT / "docker-compose.yml").read_text(), re.M
        )
    )
    known = {f"JAXJUDGE_{name.upper()}" for name in WebSettings.model_fields} | {
        "JAXJUDGE_DATA_DIR"
    }
    assert named and named <= known, named - known


def test_the_image_is_debian_with_the_pinned_python_bubblewrap_and_no_root() -> None:
    # The official Python image by default (the runtime needs Python 3.12 or 3.13), any
    # Debian base with such a python3 when asked (`make containers-test`: trixie).
    assert re.search(
        r"^ARG BASE_IMAGE=python:3\.1[23][.\d]*-slim-(bookworm|trixie)$", DOCKERFILE, re.M
    )
    assert re.search(r"^FROM \$\{BASE_IMAGE\}$", DOCKERFILE, re.M)
    assert "bubblewrap" in DOCKERFILE
    assert "pip install --no-cache-dir -e ." in DOCKERFILE  # the versions pinned in pyproject.toml
    assert re.search(r"^USER jaxjudge$", DOCKERFILE, re.M)
    for folder in (
        "app",
        "grader",
        "migrations",
        "problems",
        "reference_solutions",
        "templates",
        "static",
        "clients/python",
    ):
        assert f"COPY {folder} {folder}" in DOCKERFILE
