"""The FastAPI application: the API's and the pages' routers, health and metrics, static
files, middleware (app/server/http_stack.py), error answers (app/server/error_handlers.py) and what
starts with the server (app/server/startup.py)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app import api, web
from app.core.config import PROJECT_ROOT, settings
from app.server import health
from app.server.error_handlers import install_error_handlers
from app.server.http_stack import install_middleware
from app.server.startup import lifespan
from app.sso import oidc_providers, saml_providers


def create_app(*, workers: int = 0, prepare: bool = True) -> FastAPI:
    settings.check_for_production()  # no generated key, no cookies without TLS
    oidc_providers.configured()  # a mistake in JAXJUDGE_OIDC_PROVIDERS stops the start here
    saml_providers.check()  # a mistake in JAXJUDGE_SAML_IDPS stops the start here
    app = FastAPI(
        title="jaxjudge",
        summary="Graded JAX, Flax and Optax exercises.",
        lifespan=lifespan(workers=workers, prepare=prepare),
        docs_url=None,  # /docs is the vendored Swagger UI's page (app/web/api_docs.py)
        redoc_url=None,
    )
    app.include_router(api.router)
    app.include_router(web.router)
    app.include_router(health.router)
    app.mount("/static", StaticFiles(directory=PROJECT_ROOT / "static"), name="static")
    install_middleware(app)
    install_error_handlers(app)
    return app
