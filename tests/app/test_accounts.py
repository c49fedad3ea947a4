"""Accounts against an attacker: unambiguous names, the password policy, sign-in that
costs the same for unknown names, and a per-account delay that never locks for good."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core import security
from app.core.db import session_scope
from app.data import accounts
from app.data.accounts import sign_in_delay
from app.errors import DomainError
from app.models import utcnow

GOOD = "long test password"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Alice", "is taken"),  # case
        ("ALICE", "is taken"),
        ("\uff41lice", "only ASCII"),  # full-width a
        ("\u0430lice", "only ASCII"),  # Cyrillic a
        ("al ice", "letters, digits"),
        ("-alice", "letters, digits"),
        ("a" * 33, "letters, digits"),
    ],
)
def test_names_that_could_pass_for_another_are_refused(
    database: str, name: str, message: str
) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="alice", password=GOOD)
        with pytest.raises(DomainError, match=message):
            accounts.create_user(session=session, name=name, password=GOOD)


def test_sign_in_finds_the_account_whatever_the_case(database: str) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="Ada.L", password=GOOD)
        outcome = accounts.authenticate(session=session, name="ada.l", password=GOOD)
        assert outcome.user is not None and outcome.user.name == "Ada.L"


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("nine char", "at least 10 characters"),
        (" " * 12, "only spaces"),
        ("Grace_Hopper", "your user name"),
        ("qwertyuiop", "most common"),
        ("Password123", "most common"),
        ("x" * 300, "at most 256"),
    ],
)
def test_the_password_policy(database: str, password: str, message: str) -> None:
    with session_scope() as session, pytest.raises(DomainError, match=message):
        accounts.create_user(session=session, name="grace_hopper", password=password)


def test_unknown_names_cost_the_same_argon2_work(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    verified: list[str] = []
    real = security._hasher

    class Counting:
        def hash(self, password: str) -> str:
            return real.hash(password)

        def verify(self, hash_: str, password: str) -> bool:
            verified.append(hash_)
            return real.verify(hash_, password)

    monkeypatch.setattr(security, "_hasher", Counting())
    with session_scope() as session:
        accounts.create_user(session=session, name="ada", password=GOOD)
        assert (
            accounts.authenticate(session=session, name="ada", password="wrong one!").user is None
        )
        assert (
            accounts.authenticate(session=session, name="nobody", password="wrong one!").user
            is None
        )
    assert len(verified) == 2 and all(h.startswith("$argon2") for h in verified)


def test_failed_sign_ins_delay_the_account_exponentially_but_not_forever(database: str) -> None:
    assert [sign_in_delay(n).total_seconds() for n in (4, 5, 6, 7, 12, 40)] == [
        0, 30, 60, 120, 900, 900,
    ]  # fmt: skip
    with session_scope() as session:
        user = accounts.create_user(session=session, name="ada", password=GOOD)
        for _ in range(5):
            assert (
                accounts.authenticate(session=session, name="ada", password="guess it!!").user
                is None
            )
        waiting = accounts.authenticate(session=session, name="ada", password=GOOD)
        assert waiting.user is None and 25 <= waiting.wait_seconds <= 31  # the owner waits too
        user.sign_in_blocked_until = utcnow() - timedelta(seconds=1)  # ... 30 s later
        assert accounts.authenticate(session=session, name="ada", password=GOOD).user is user
        assert user.failed_sign_ins == 0


def test_unknown_names_are_delayed_the_same_way(database: str) -> None:
    with session_scope() as session:
        for _ in range(5):
            accounts.authenticate(session=session, name="ghost", password="guess it!!")
        assert accounts.authenticate(session=session, name="GHOST", password="x").wait_seconds > 0


def test_a_disabled_account_cannot_sign_in(database: str) -> None:
    with session_scope() as session:
        user = accounts.create_user(session=session, name="ada", password=GOOD)
        accounts.set_disabled(session=session, user=user, disabled=True)
        outcome = accounts.authenticate(session=session, name="ada", password=GOOD)
        assert outcome.user is None and outcome.disabled
        # A wrong password says nothing about the account's state.
        assert not accounts.authenticate(
            session=session, name="ada", password="wrong one!"
        ).disabled
