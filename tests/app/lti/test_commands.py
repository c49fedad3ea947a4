"""`jaxjudge lti`: registering an LMS from the shell, listing and removing it, the
Dynamic Registration link, key rotation, and resending grades."""

from __future__ import annotations

import json

import pytest

from app.commands.cli import main
from app.core.db import session_scope
from app.lti import keys, registration
from tests.lti_platform import CLIENT_ID

ISSUER = "https://moodle.uni.example"


def add(*deployments: str) -> int:
    return main(
        [
            "lti", "add-platform", "--issuer", ISSUER, "--client-id", CLIENT_ID,
            *(f"--deployment-id={d}" for d in deployments),
            "--login-url", f"{ISSUER}/mod/lti/auth.php", "--token-url", f"{ISSUER}/mod/lti/token.php",
            "--jwks-url", f"{ISSUER}/mod/lti/certs.php",
        ]
    )  # fmt: skip


def test_add_list_remove(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert add("1", "2") == 0
    assert f"{ISSUER} (client id {CLIENT_ID})" in capsys.readouterr().out
    assert add("2", "3") == 0  # the same registration again: its new deployment is added
    assert add() == 0  # and again with nothing new: its URLs are set (a typo fixed), no copy
    capsys.readouterr()
    assert main(["lti", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["issuer"] == ISSUER and listed["deployment_ids"] == ["1", "2", "3"]
    assert main(["lti", "remove", str(listed["id"])]) == 0
    capsys.readouterr()
    assert main(["lti", "list"]) == 0
    assert "no LMS registered" in capsys.readouterr().out


def test_bad_values_are_one_clear_error(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "lti", "add-platform", "--issuer", "moodle", "--client-id", "x",
            "--login-url", "a", "--token-url", "b", "--jwks-url", "c",
        ]
    )  # fmt: skip
    assert code != 0
    err = capsys.readouterr().err
    assert "the issuer must be an http(s) URL" in err and "Traceback" not in err


def test_a_registration_link_and_a_rotated_key(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lti", "registration-url", "--base-url", "https://jj.example/"]) == 0
    link = capsys.readouterr().out.splitlines()[0]
    assert link.startswith("https://jj.example/lti/register?invitation=")
    with session_scope() as session:  # one jaxjudge made, unused
        assert registration.check_invitation(session, link.split("invitation=", 1)[1])
    before = keys.public_jwks()["keys"][0]["kid"]
    assert main(["lti", "rotate-key"]) == 0
    with session_scope() as session:
        assert keys.signing_key(session).kid != before


def test_resend_with_nothing_to_send(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lti", "resend"]) == 0
    assert "0 re-armed, 0 sent now" in capsys.readouterr().out
