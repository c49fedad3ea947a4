"""The SAML service provider's own key and certificate: JAXJUDGE_SAML_SP_KEY_FILE and
JAXJUDGE_SAML_SP_CERT_FILE where the operator gives them, else a pair generated once
into the data dir (the key mode 0600, written under a temporary name and linked in
place, like the session secret: two processes starting at once agree on one pair).

The key signs our AuthnRequests and decrypts assertions an IdP encrypts to us; the
certificate is in our metadata. A self-signed certificate is the SAML norm: metadata,
not a CA, says which certificate an entity uses."""

from __future__ import annotations

import contextlib
import datetime
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from app.core.config import grader_settings, settings

VALID_DAYS = 3650


@dataclass(frozen=True)
class KeyPair:
    key_file: Path
    cert_file: Path


def self_signed(common_name: str) -> tuple[bytes, bytes]:
    """A new RSA key (PEM, PKCS#8) and a self-signed certificate for it (PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


def _write_once(path: Path, content: bytes) -> None:
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
    try:
        os.link(draft, path)
    finally:
        draft.unlink()


def sp_key_pair() -> KeyPair:
    if settings.saml_sp_key_file and settings.saml_sp_cert_file:
        return KeyPair(settings.saml_sp_key_file, settings.saml_sp_cert_file)
    folder = grader_settings.data_dir
    pair = KeyPair(folder / "saml_sp.key", folder / "saml_sp.crt")
    if pair.cert_file.exists():
        return pair
    folder.mkdir(parents=True, exist_ok=True)
    # One file holding both, linked in place at once; then split: a process that loses
    # the race reads the winner's pair, never a key with another's certificate.
    both = folder / "saml_sp.pem"
    if not both.exists():
        key_pem, cert_pem = self_signed("jaxjudge SAML service provider")
        with contextlib.suppress(FileExistsError):  # another process won; use its pair
            _write_once(both, key_pem + cert_pem)
    text = both.read_bytes()
    split = text.index(b"-----BEGIN CERTIFICATE-----")
    for path, content in ((pair.key_file, text[:split]), (pair.cert_file, text[split:])):
        with contextlib.suppress(FileExistsError):
            _write_once(path, content)
    return pair
