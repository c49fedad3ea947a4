"""A course's git repository of problem folders: its URL and branch, and the webhook's
secret.

The secret is shown once and never stored: it is derived from the server's secret key
and a random nonce (HMAC-SHA256), and the row keeps the nonce with a SHA-256 of the
secret, so a copy of the database alone can neither call the webhook nor sign a body as
GitHub does (``X-Hub-Signature-256``, an HMAC of the body keyed by the secret, which a
plain hash of the secret could not check). Every comparison is constant-time."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from app.core.config import settings
from app.core.sessions import secret_key
from app.errors import InvalidInputError
from app.models import CourseProblemRepo

BRANCH = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,100}$")
SECRET_HEADERS = ("x-jaxjudge-secret", "x-gitlab-token")
SIGNATURE_HEADER = "x-hub-signature-256"


def repo_of(*, session: Session, course_id: int) -> CourseProblemRepo | None:
    return session.get(CourseProblemRepo, course_id)


def checked_url(url: str) -> str:
    """``url`` when a pull may use it: a scheme the operator allows (https by default),
    never a local path unless 'file' is allowed, never a transport helper (``ext::``)."""
    url = url.strip()
    allowed = set(settings.problem_repo_schemes.split())
    if not url or len(url) > 500 or any(c.isspace() or ord(c) < 32 for c in url):
        raise InvalidInputError("Give the repository's URL on one line (500 characters at most).")
    if url.startswith("-") or "::" in url:
        raise InvalidInputError("Transport helpers (such as ext::) are never allowed.")
    scheme = urlsplit(url).scheme.lower() if "://" in url else "file"
    if scheme not in allowed or (scheme != "file" and not urlsplit(url).hostname):
        raise InvalidInputError(
            f"This server pulls repositories by {', '.join(sorted(allowed))} only"
            " (for example https://github.com/you/course-problems.git)."
        )
    return url


def link(
    *, session: Session, course_id: int, url: str, branch: str
) -> tuple[CourseProblemRepo, str | None]:
    """Link (or re-point) the course's repository. Returns the row and the webhook's
    secret when a new one was made (a new link): shown once, never again."""
    url = checked_url(url)
    branch = branch.strip() or "main"
    if not BRANCH.match(branch):
        raise InvalidInputError(
            "A branch name is letters, digits, '.', '_', '/' and '-' (100 at most, no '..')."
        )
    repo = repo_of(session=session, course_id=course_id)
    secret = None
    if repo is None:
        repo = CourseProblemRepo(course_id=course_id, url=url, branch=branch)
        secret = _new_secret(repo)
        session.add(repo)
    else:
        repo.url, repo.branch = url, branch
    session.flush()
    return repo, secret


def new_secret(*, session: Session, repo: CourseProblemRepo) -> str:
    """A new webhook secret (the old one stops working); shown once."""
    secret = _new_secret(repo)
    session.flush()
    return secret


def unlink(*, session: Session, course_id: int) -> None:
    repo = repo_of(session=session, course_id=course_id)
    if repo is not None:
        session.delete(repo)
        session.flush()


def _derived(nonce: str) -> str:
    return hmac.new(secret_key().encode(), f"problem-repo:{nonce}".encode(), "sha256").hexdigest()


def _new_secret(repo: CourseProblemRepo) -> str:
    nonce = secrets.token_hex(16)
    secret = _derived(nonce)
    repo.webhook_secret_hash = f"{nonce}:{hashlib.sha256(secret.encode()).hexdigest()}"
    return secret


def _secret(repo: CourseProblemRepo) -> str | None:
    """The repository's secret, or None when the server's key changed since it was made."""
    nonce, _, digest = repo.webhook_secret_hash.partition(":")
    secret = _derived(nonce)
    expected = hashlib.sha256(secret.encode()).hexdigest()
    return secret if hmac.compare_digest(expected, digest) else None


def webhook_allowed(repo: CourseProblemRepo, headers: dict[str, str], body: bytes) -> bool:
    """Whether a webhook call carries the secret: in a header as it is (ours, or GitLab's
    ``X-Gitlab-Token``), or as GitHub's ``X-Hub-Signature-256`` of the body."""
    secret = _secret(repo)
    if secret is None:
        return False
    for name in SECRET_HEADERS:
        given = headers.get(name)
        if given is not None:
            return hmac.compare_digest(given.encode(), secret.encode())
    signature = headers.get(SIGNATURE_HEADER)
    if signature is not None:
        expected = "sha256=" + hmac.new(secret.encode(), body, "sha256").hexdigest()
        return hmac.compare_digest(signature.encode(), expected.encode())
    return False
