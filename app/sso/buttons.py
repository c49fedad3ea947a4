"""The single sign-on buttons: one per configured provider, on the sign-in page (a link
that starts a sign-in) and on the account page (a form that links the provider to the
signed-in account). Each protocol adds its providers here."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import quote

from app.sso import oidc_providers, saml_providers


@dataclass(frozen=True)
class SignInButton:
    label: str
    url: str  # GET: starts a sign-in, then goes back to next
    link_url: str = ""  # POST with the form token, signed in: links this provider


def buttons(*, next_path: str = "/") -> list[SignInButton]:
    """The buttons in the operator's order: OpenID Connect providers, then SAML ones."""
    after = f"?next={quote(next_path, safe='/')}" if next_path and next_path != "/" else ""
    return [
        SignInButton(
            label=provider.label,
            url=f"/sso/oidc/{provider.name}/start{after}",
            link_url=f"/sso/oidc/{provider.name}/link",
        )
        for provider in oidc_providers.configured()
    ] + [
        SignInButton(
            label=provider.label,
            url=f"/sso/saml/{provider.name}/start{after}",
            link_url=f"/sso/saml/{provider.name}/link",
        )
        for provider in _saml_providers()
    ]


def _saml_providers() -> list[saml_providers.SamlProvider]:
    """A list that does not parse shows no SAML buttons (the start-up log names it)."""
    try:
        return saml_providers.providers()
    except saml_providers.SamlSettingsError as error:
        logging.getLogger("jaxjudge.saml").error("%s", error)
        return []
