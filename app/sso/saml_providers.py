"""The SAML identity providers an operator configured (JAXJUDGE_SAML_IDPS) and their
metadata. A list that does not parse is a clear error when it is read, naming the
setting; an IdP whose metadata cannot be read (a missing file, a URL that is down)
refuses only its own sign-in, with a page that says so; the rest of the server runs.

Metadata from a URL is fetched when first needed and kept for an hour; a fetch that
fails is tried again at the next sign-in, not cached."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
from defusedxml import ElementTree  # type: ignore[import-untyped]

from app.core.config import settings
from app.sso import saml_keys

log = logging.getLogger("jaxjudge.saml")
METADATA_SECONDS = 3600
METADATA_LIMIT = 5 * 1024 * 1024  # from a URL; a federation's aggregate is larger: use MDQ
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MD = "{urn:oasis:names:tc:SAML:2.0:metadata}"


class SamlSettingsError(ValueError):
    """JAXJUDGE_SAML_IDPS does not describe a list of providers."""


class ProviderUnavailableError(Exception):
    """An IdP's metadata cannot be read now; the message is for the person signing in."""


@dataclass(frozen=True)
class SamlProvider:
    name: str  # in URLs and on linked identities
    label: str = ""  # on the sign-in button; default: the name
    metadata_file: str = ""
    metadata_url: str = ""
    entity_id: str = ""  # which IdP of the metadata; empty: the only one there
    student_id_attribute: str = ""


def _parse(text: str) -> list[SamlProvider]:
    where = "JAXJUDGE_SAML_IDPS"
    if not text.lstrip().startswith(("[", "{")):
        where = text.strip()
        try:
            text = Path(where).read_text()
        except OSError as error:
            raise SamlSettingsError(f"JAXJUDGE_SAML_IDPS: cannot read {where}: {error}") from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as error:
        raise SamlSettingsError(f"{where} is not JSON: {error}") from None
    if not isinstance(entries, list):
        raise SamlSettingsError(f"{where} must be a JSON list of providers.")
    providers: list[SamlProvider] = []
    fields = set(SamlProvider.__dataclass_fields__)
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
            raise SamlSettingsError(f"{where}[{index}] must be an object of strings.")
        if unknown := set(entry) - fields:
            raise SamlSettingsError(f"{where}[{index}] has unknown keys: {sorted(unknown)}.")
        provider = SamlProvider(**entry)
        if not NAME.fullmatch(provider.name):
            raise SamlSettingsError(
                f"{where}[{index}].name must be 1-64 of a-z, 0-9, _ and -, starting alphanumeric."
            )
        if bool(provider.metadata_file) == bool(provider.metadata_url):
            raise SamlSettingsError(
                f"{where}[{index}] needs exactly one of metadata_file and metadata_url."
            )
        if any(p.name == provider.name for p in providers):
            raise SamlSettingsError(f"{where}: the name {provider.name!r} is used twice.")
        providers.append(SamlProvider(**{**entry, "label": provider.label or provider.name}))
    return providers


def providers() -> list[SamlProvider]:
    return _parse(settings.saml_idps) if settings.saml_idps.strip() else []


def find(name: str) -> SamlProvider | None:
    return next((p for p in providers() if p.name == name), None)


def check() -> None:
    """At start-up: a list that does not parse, or an operator's SP key or certificate that
    is not there, stops the start (SamlSettingsError); an IdP whose metadata file cannot
    be read is logged and refuses only its own sign-in. Metadata URLs are fetched at the
    first sign-in, not here: an IdP that is down must not hold up the start."""
    configured = providers()
    if bool(settings.saml_sp_key_file) != bool(settings.saml_sp_cert_file):
        raise SamlSettingsError(
            "Set both JAXJUDGE_SAML_SP_KEY_FILE and JAXJUDGE_SAML_SP_CERT_FILE, or neither."
        )
    if configured:
        pair = saml_keys.sp_key_pair()
        for path in (pair.key_file, pair.cert_file):
            if not path.is_file():
                raise SamlSettingsError(
                    f"The SAML service provider's key or certificate {path} is missing."
                )
    for provider in configured:
        if provider.metadata_file:
            try:
                metadata(provider)
            except ProviderUnavailableError as error:
                log.error("SAML identity provider %s: %s", provider.name, error)


_cache: dict[str, tuple[float, str]] = {}
_lock = threading.Lock()


def forget() -> None:
    with _lock:
        _cache.clear()


def _read(provider: SamlProvider) -> str:
    if provider.metadata_file:
        try:
            return Path(provider.metadata_file).read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise ProviderUnavailableError(
                f"{provider.label}'s sign-in is not set up correctly (its metadata file cannot"
                f" be read: {getattr(error, 'strerror', None) or error}); tell the administrators."
            ) from None
    body = bytearray()
    try:
        with httpx.stream("GET", provider.metadata_url, timeout=10, follow_redirects=True) as got:
            got.raise_for_status()
            for chunk in got.iter_bytes():
                body += chunk
                if len(body) > METADATA_LIMIT:
                    raise ProviderUnavailableError(
                        f"{provider.label}'s metadata is larger than 5 MB; tell the"
                        " administrators to point at this IdP's own metadata."
                    )
    except httpx.HTTPError:
        raise ProviderUnavailableError(
            f"{provider.label} cannot be reached now; try again in a few minutes."
        ) from None
    return body.decode("utf-8", "replace")


def metadata(provider: SamlProvider) -> tuple[str, str]:
    """The provider's metadata XML and its IdP's entity id (ProviderUnavailableError)."""
    key = provider.metadata_file or provider.metadata_url
    with _lock:
        kept = _cache.get(key)
    if kept and (provider.metadata_file or time.monotonic() - kept[0] < METADATA_SECONDS):
        xml = kept[1]
    else:
        xml = _read(provider)
    entity_id = _idp_entity_id(provider, xml)
    with _lock:
        _cache[key] = (time.monotonic(), xml)
    return xml, entity_id


def _idp_entity_id(provider: SamlProvider, xml: str) -> str:
    broken = ProviderUnavailableError(
        f"{provider.label}'s sign-in is not set up correctly (its metadata names no such"
        " identity provider); tell the administrators."
    )
    try:
        root = ElementTree.fromstring(xml)
    except Exception:  # defusedxml's refusals and every parse error: not metadata
        raise broken from None
    descriptors = (
        [root] if root.tag == f"{MD}EntityDescriptor" else root.iter(f"{MD}EntityDescriptor")
    )
    idps = [
        d.get("entityID", "") for d in descriptors if d.find(f"{MD}IDPSSODescriptor") is not None
    ]
    if provider.entity_id:
        if provider.entity_id in idps:
            return provider.entity_id
        raise broken
    if len(idps) != 1:
        raise broken
    return str(idps[0])
