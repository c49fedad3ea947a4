"""The caller's own API tokens: list, create (shown once, from a signed-in browser
only: app/api/deps.py), revoke."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.deps import BrowserUser, CurrentUser
from app.core.request_db import SessionDep
from app.data import api_tokens
from app.errors import NotFoundError
from app.schemas.learners import TokenCreate, TokenCreated, TokenPublic, TokensPublic

router = APIRouter(prefix="/api/tokens", tags=["tokens"])


@router.get("", response_model=TokensPublic)
def list_tokens(user: CurrentUser, session: SessionDep) -> TokensPublic:
    rows = api_tokens.of_user(session=session, user=user)
    return TokensPublic(data=[TokenPublic.model_validate(row) for row in rows], count=len(rows))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=TokenCreated)
def create_token(body: TokenCreate, user: BrowserUser, session: SessionDep) -> TokenCreated:
    """A new token for the caller signed in through a browser (its session and CSRF
    token); a request made with an API token gets 403. The token itself is in this
    answer only."""
    token, row = api_tokens.create(
        session=session, user=user, name=body.name, expires_in_days=body.expires_in_days
    )
    return TokenCreated(**TokenPublic.model_validate(row).model_dump(), token=token)


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(token_id: int, user: CurrentUser, session: SessionDep) -> Response:
    """Revoke one of the caller's tokens (the one in use included): it stops working now."""
    if not api_tokens.revoke(session=session, user=user, token_id=token_id):
        raise NotFoundError(f"No token {token_id} of yours.")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
