"""The web app's settings, read from ``JAXJUDGE_*`` environment variables.

The database, sessions and cookies, request limits, the queue's leases and
caps, publishing. Grading settings (paths, runtime, sandbox, pool) are the
grader's own (grader/config.py, ``grader_settings`` here); the web reads them,
never the other way round.

``JAXJUDGE_ENVIRONMENT=production`` refuses to start with a generated signing
key or with cookies that travel without TLS (``check_for_production``).
"""

from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from grader.config import PROJECT_ROOT
from grader.config import settings as grader_settings

__all__ = ["PROJECT_ROOT", "WebSettings", "grader_settings", "settings"]


class InsecureSettingsError(RuntimeError):
    """Production settings that would expose sessions."""


class WebSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JAXJUDGE_", extra="ignore")

    environment: Literal["development", "production"] = Field(
        "development",
        description="production: refuse a generated secret key and cookies without Secure.",
    )
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL; default SQLite at var/jaxjudge.db. A postgresql+psycopg:// URL works unchanged.",
    )
    secret_key: str | None = Field(
        None,
        description="Signs session cookies; default: generated once and kept in var/secret_key (mode 0600).",
    )
    secure_cookies: bool = Field(
        False, description="Send the session cookie over HTTPS only (set behind TLS)."
    )
    metrics_token: str | None = Field(
        None,
        description=(
            "Bearer token a Prometheus scrape of /metrics must bring; unset: only scrapes from"
            " this machine (loopback, not through a proxy) are answered."
        ),
    )
    forwarded_allow_ips: str | None = Field(
        None,
        description=(
            "Comma-separated addresses of reverse proxies whose X-Forwarded-For header is"
            " trusted for the client address; unset: the direct peer is the client."
        ),
    )
    lease_seconds: int = Field(
        15,
        ge=3,
        description=(
            "How long a worker's claim on a submission lasts unrenewed; renewed every third of it"
            " while grading, so a dead worker's submissions are free again within this time."
        ),
    )
    request_threads: int = Field(
        32, ge=1, description="Threads that serve requests (the database pool is sized with them)."
    )
    read_threads: int | None = Field(
        None,
        ge=1,
        description=(
            "Threads that answer the hot reads (problem list, tracks, a submission's state),"
            " apart from the request threads: few, so that 50 polling clients do not crowd"
            " the interpreter (app/api/hot_reads.py). Unset: 1 on SQLite, whose reads never"
            " wait on a network; 4 on PostgreSQL, so that reads overlap their round trips."
        ),
    )
    database_wait_seconds: float = Field(
        5.0,
        gt=0,
        description=(
            "How long a request waits for a database connection or lock before it is answered"
            " 503 with Retry-After."
        ),
    )
    max_queued_per_user: int = Field(
        5, ge=1, description="Submissions one user may have waiting at once."
    )
    max_submits_per_hour: int = Field(
        60,
        ge=1,
        description=(
            "Graded submits (not runs of the samples) one user may make per problem in an hour:"
            " bounds how far a search on hidden pass/fail can go."
        ),
    )
    max_streams_per_user: int = Field(
        4,
        ge=1,
        description=(
            "Verdict streams (Server-Sent Events) one user may hold open at once: past it a new"
            " one is answered 429 and the page polls instead (the server holds 500 in all)."
        ),
    )
    publish_new_problems: bool = Field(
        True,
        description=(
            "Sync publishes a problem's first version at once (learners have seen nothing of"
            " it) once it is proven: a passing check recorded on its files, or the shipped"
            " bank's proof (problems/proven.txt). Set false to make new problems wait, like"
            " changed ones, for a publish after preview."
        ),
    )

    public_url: str | None = Field(
        None,
        description=(
            "The address learners and LMSs reach jaxjudge at (https://jaxjudge.example.edu):"
            " LTI's redirect, login and JWKS URLs are made from it. Unset: each request's own."
        ),
    )
    lms_frame_origins: str = Field(
        "",
        description=(
            "Space-separated origins of LMSs that may show jaxjudge in a frame"
            " (https://canvas.example.edu). Set: pages may be framed by them and the session"
            " cookie is SameSite=None (needs JAXJUDGE_SECURE_COOKIES). Unset: launches open"
            " in their own window."
        ),
    )
    lti_registration_private_networks: str = Field(
        "",
        description=(
            "Space-separated networks that LTI Dynamic Registration may call although they"
            " are not public (10.20.0.0/16 for a campus LMS, 127.0.0.1/32 for one on this"
            " machine); plain http only to loopback addresses listed here. Unset: registration"
            " calls public addresses only, over https."
        ),
    )
    saml_idps: str = Field(
        "",
        description=(
            "SAML 2.0 identity providers, a JSON list or the path of a file holding one: each"
            ' {"name", "label", "metadata_file" or "metadata_url", optional "entity_id" and'
            ' "student_id_attribute"} (docs/deployment.md, Sign-in). Unset: no SAML sign-in.'
        ),
    )
    saml_sp_key_file: Path | None = Field(
        None,
        description=(
            "The SAML service provider's private key (PEM); default: generated once into"
            " var/saml_sp.key (mode 0600) with its certificate."
        ),
    )
    saml_sp_cert_file: Path | None = Field(
        None, description="The certificate of JAXJUDGE_SAML_SP_KEY_FILE (PEM)."
    )

    smtp_url: str | None = Field(
        None,
        description=(
            "Where mail is sent: smtp://USER:PASSWORD@HOST:587 (STARTTLS when the server"
            " offers it; ?starttls=required refuses one that does not), smtps://...:465"
            " (TLS from the start); user and password URL-encoded; ?cafile=PATH trusts a"
            " private CA. Credentials only ever travel over TLS. Unset: mails are written as"
            " .eml files to the data dir's mail/ folder (the admin mail page says so)."
        ),
    )
    smtp_timeout: float = Field(
        20.0, gt=0, description="Seconds one SMTP connection or reply may take."
    )
    mail_from: str = Field(
        "jaxjudge <jaxjudge@localhost>",
        description="The From of every mail (an address the SMTP server may send as).",
    )
    require_verified_email: bool = Field(
        False,
        description=(
            "true: sign-up asks for an email, and an account submits nothing until it has"
            " followed the link mailed to it (or its identity provider gave the address)."
        ),
    )

    oidc_providers: str = Field(
        "",
        description=(
            "OpenID Connect providers people may sign in with: a JSON list of objects (name,"
            " label, issuer, client_id, client_secret; optional scopes, student_id_claim,"
            " allowed_domains), or the path of a file holding that list (keep client secrets"
            " out of the environment). docs/deployment.md, Sign-in. Unset: none."
        ),
    )
    password_sign_in: bool = Field(
        True,
        description=(
            "false: the sign-in page shows only the single sign-on buttons, sign-up is"
            " closed, and a password signs in administrators only (at /login?password=1)."
        ),
    )

    max_request_bytes: int = Field(
        64 * 1024,
        description=(
            "Largest request body the web app reads, except a submission's"
            " (twice max_source_bytes plus 64 KiB); larger ones get 413 unread."
        ),
    )
    course_problem_file_bytes: int = Field(
        128 * 1024,
        ge=1024,
        description="Largest file of a course problem saved in the browser editor.",
    )
    course_problem_bytes: int = Field(
        512 * 1024,
        ge=4096,
        description=(
            "Largest course problem (every file together) saved in the browser editor;"
            " the editor's form may be three times this (its text is percent-encoded)."
        ),
    )

    problem_upload_bytes: int = Field(
        4 * 1024 * 1024,
        description=(
            "Largest zip of problem folders an instructor may upload to a course (the"
            " uncompressed files are capped again inside: grader/problems/folders.py)."
        ),
    )
    problem_repo_schemes: str = Field(
        "https",
        description=(
            "URL schemes a course's git repository of problems may use, space-separated."
            " Add 'http' only for a trusted local server (tests), and 'file' only if"
            " instructors may read this machine's folders: local paths and ext:: are"
            " refused otherwise, ext:: always."
        ),
    )
    problem_repo_timeout: float = Field(
        60.0, description="Seconds a pull of a course's git repository may take in all."
    )
    problem_repo_bytes: int = Field(
        50 * 1024 * 1024,
        description="Largest checkout of a course's git repository a pull accepts.",
    )

    @field_validator("lti_registration_private_networks")
    @classmethod
    def _networks_parse(cls, value: str) -> str:
        for network in value.split():
            ip_network(network, strict=False)  # a ValueError names the bad one
        return value

    @property
    def database(self) -> str:
        return self.database_url or f"sqlite:///{grader_settings.data_dir / 'jaxjudge.db'}"

    @property
    def hot_read_threads(self) -> int:
        if self.read_threads is not None:
            return self.read_threads
        return 1 if self.database.startswith("sqlite") else 4

    @property
    def versions_dir(self) -> Path:
        """Materialised problem versions, one folder per content hash."""
        return grader_settings.data_dir / "versions"

    @property
    def frame_origins(self) -> list[str]:
        return self.lms_frame_origins.split()

    @property
    def registration_private_networks(self) -> list[IPv4Network | IPv6Network]:
        return [ip_network(n, strict=False) for n in self.lti_registration_private_networks.split()]

    def check_for_production(self) -> None:
        """In production, refuse what would expose sessions (called at app creation)."""
        if self.environment != "production":
            return
        problems = []
        if not self.secret_key:
            problems.append("set JAXJUDGE_SECRET_KEY (a generated key changes with var/)")
        if not self.secure_cookies:
            problems.append("set JAXJUDGE_SECURE_COOKIES=true (serve behind TLS)")
        if self.frame_origins and not self.secure_cookies:
            problems.append("JAXJUDGE_LMS_FRAME_ORIGINS needs JAXJUDGE_SECURE_COOKIES=true")
        if problems:
            raise InsecureSettingsError("refusing to start in production: " + "; ".join(problems))


settings = WebSettings()
