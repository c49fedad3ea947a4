"""The container files, validated statically: no container engine runs on the
development machines (no Docker daemon; images come from Docker Hub, which is not a
package registry we may reach), so the stack itself is not started here."""

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
    assert re.search(r"^FROM python:3\.11\.\d+-slim-bookworm$", DOCKERFILE, re.M)
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
