"""The OpenID Connect providers the operator configured (``JAXJUDGE_OIDC_PROVIDERS``): a
JSON list, or the path of a file holding it, validated once into ``OidcProvider``s. A
mistake stops the server at start-up with a sentence naming the provider and field."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from app.core.config import settings

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class ProviderSettingsError(ValueError):
    """JAXJUDGE_OIDC_PROVIDERS cannot be used; the message says where and why."""


class OidcProvider(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9-]{0,63}$",
        description="In URLs (/sso/oidc/NAME/callback) and in the identity records; never change it.",
    )
    label: str = Field(min_length=1, max_length=80, description="The button: 'University account'.")
    issuer: str = Field(
        min_length=1,
        max_length=500,
        description="The provider's issuer; discovery reads ISSUER/.well-known/openid-configuration.",
    )
    client_id: str = Field(min_length=1, max_length=500)
    client_secret: str = Field(min_length=1, max_length=2000)
    scopes: str = Field("openid email profile", max_length=500)
    student_id_claim: str = Field(
        "", max_length=200, description="An ID-token claim holding the student id; empty: none."
    )
    allowed_domains: list[str] = Field(
        default_factory=list,
        description="Only verified emails at these domains may sign in; empty: anyone the provider signs in.",
    )

    @field_validator("issuer")
    @classmethod
    def _https_issuer(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme == "https" and parts.hostname:
            return value.rstrip("/") if value.endswith("/") and parts.path != "/" else value
        if parts.scheme == "http" and parts.hostname in _LOOPBACK:
            return value  # a provider on this machine (tests, a local Keycloak)
        raise ValueError("must be an https:// URL (http only to a provider on this machine)")

    @field_validator("scopes")
    @classmethod
    def _openid_scope(cls, value: str) -> str:
        if "openid" not in value.split():
            raise ValueError("must include openid")
        return value

    @field_validator("allowed_domains")
    @classmethod
    def _lower_domains(cls, value: list[str]) -> list[str]:
        return [domain.strip().lower().lstrip("@") for domain in value if domain.strip()]

    def allows(self, email: str) -> bool:
        """An allowed_domains list admits only a verified email at one of its domains."""
        if not self.allowed_domains:
            return True
        return bool(email) and email.rsplit("@", 1)[-1].lower() in self.allowed_domains


_PROVIDERS = TypeAdapter(list[OidcProvider])


def parse(raw: str) -> list[OidcProvider]:
    """The providers in ``raw`` (JSON, or a file path); ProviderSettingsError otherwise."""
    text = raw.strip()
    if not text:
        return []
    if not text.startswith(("[", "{")):
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as error:
            raise ProviderSettingsError(
                f"JAXJUDGE_OIDC_PROVIDERS: cannot read the file {raw.strip()!r}"
                f" ({error.strerror or error})."
            ) from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ProviderSettingsError(
            f"JAXJUDGE_OIDC_PROVIDERS is not a JSON list: {error}."
        ) from None
    try:
        providers = _PROVIDERS.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ProviderSettingsError(f"JAXJUDGE_OIDC_PROVIDERS[{where}]: {first['msg']}.") from None
    names = [provider.name for provider in providers]
    if duplicate := next((name for name in names if names.count(name) > 1), None):
        raise ProviderSettingsError(f"JAXJUDGE_OIDC_PROVIDERS names {duplicate!r} twice.")
    return providers


@cache
def _parsed(raw: str) -> tuple[OidcProvider, ...]:
    return tuple(parse(raw))


def configured() -> tuple[OidcProvider, ...]:
    """The providers of the current settings (parsed once per value)."""
    return _parsed(settings.oidc_providers)


def named(name: str) -> OidcProvider | None:
    return next((provider for provider in configured() if provider.name == name), None)
