"""Hot reads: the GETs that every open page and script polls (the problem list, the
tracks, a submission's state), answered in one thread hop on threads of their own.

A plain route makes four hops to the request threads: the caller's credential, the
route, the answer's validation and the session's end. With 50 clients the 32 request
threads then run side by side, and every hop waits for the interpreter behind the
others: on 2 cores the problem list served 247 requests a second at 32 threads and
449-525 at one (docs/performance.md, "Hot reads"). Here a read authenticates, queries,
serialises and ends its session in one function, run on threads of its own
(``read_threads``: one on SQLite, whose reads never wait on a network, four on
PostgreSQL), while every other request keeps the 32 threads that a slow identity
provider or LMS may hold for seconds.

Admission (app/core/admission.py) still counts these requests: a read holds one
database connection, inside the request threads' share of the pool."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from anyio import CapacityLimiter
from anyio.to_thread import run_sync
from fastapi import Request, Response
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.api.deps import current_user
from app.core.config import settings
from app.core.db import end_session, new_session
from app.models import User

JSON = "application/json"


@dataclass(frozen=True)
class Body:
    """An answer serialised and compressed once (to be served many times), with its
    entity tag (a hash of its bytes): a client that sends it back in If-None-Match gets
    304 and no body. The gzip form, for the clients that accept it (browsers, httpx,
    requests), has a tag of its own (RFC 9110 section 8.8.3: one per representation)."""

    json: bytes
    gzip: bytes
    etag: str

    @classmethod
    def of(cls, answer: BaseModel) -> Body:
        json = answer.model_dump_json().encode()
        tag = hashlib.blake2b(json, digest_size=12).hexdigest()
        return cls(json, gzip.compress(json, compresslevel=6, mtime=0), f'"{tag}"')

    @property
    def gzip_etag(self) -> str:
        return self.etag[:-1] + '-gzip"'


Read = Callable[[Session, User], BaseModel | Body]

# One limiter per event loop, sized when the loop first reads: anyio's limiters wait on
# their loop (a server has one loop; tests start several).
_threads: WeakKeyDictionary[asyncio.AbstractEventLoop, CapacityLimiter] = WeakKeyDictionary()


def _limiter() -> CapacityLimiter:
    loop = asyncio.get_running_loop()
    if loop not in _threads:
        _threads[loop] = CapacityLimiter(settings.hot_read_threads)
    return _threads[loop]


def _answer(request: Request, authorization: str | None, read: Read) -> bytes | Body:
    """The caller authenticated, ``read`` run and its answer serialised, in one session
    that ends here, committed (what authentication records) or rolled back."""
    session = new_session()
    try:
        user = current_user(request, session, authorization)
        found = read(session, user)
        body = found if isinstance(found, Body) else found.model_dump_json().encode()
    except BaseException:
        end_session(session, commit=False)
        raise
    end_session(session, commit=True)
    return body


async def answer(request: Request, authorization: str | None, read: Read) -> Response:
    """``read``'s answer as JSON for the caller of ``request`` (its bearer token
    ``authorization``, or its browser session). A client that goes away
    does not cut the read short: the thread finishes and ends its session."""
    body = await run_sync(_answer, request, authorization, read, limiter=_limiter())
    if isinstance(body, bytes):
        return Response(body, media_type=JSON)
    compressed = _accepts_gzip(request.headers.get("accept-encoding", ""))
    headers = {
        "ETag": body.gzip_etag if compressed else body.etag,
        "Cache-Control": "private, no-cache",
        "Vary": "Accept-Encoding",
    }
    if _tags(request.headers.get("if-none-match", "")) & {body.etag, body.gzip_etag, "*"}:
        return Response(status_code=304, headers=headers)
    if compressed:
        headers["Content-Encoding"] = "gzip"
        return Response(body.gzip, media_type=JSON, headers=headers)
    return Response(body.json, media_type=JSON, headers=headers)


def _tags(if_none_match: str) -> set[str]:
    """The entity tags of an If-None-Match header (a weak one compares as its strong
    form, RFC 9110 section 13.1.2)."""
    return {tag.strip().removeprefix("W/") for tag in if_none_match.split(",") if tag.strip()}


def _accepts_gzip(accept_encoding: str) -> bool:
    """Whether Accept-Encoding lists gzip (or ``*``) with a weight above zero."""
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.partition(";")
        if coding.strip() in {"gzip", "*"}:
            weight = params.strip().removeprefix("q=").strip() if "q=" in params else "1"
            try:
                return float(weight) > 0
            except ValueError:
                return False
    return False
