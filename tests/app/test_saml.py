"""SAML 2.0 sign-in through a real IdP (tests/saml_idp.py: pysaml2's IdP over HTTP on
127.0.0.1, its own keys): the sign-in, a link from the account page, and every bad
answer refused with a page that changes nothing."""

from __future__ import annotations

import base64
import json
import re
import shutil
import stat
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from unittest import mock
from urllib.parse import parse_qs, urlparse

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.core.config import grader_settings, settings
from app.core.db import session_scope
from app.data import accounts
from app.models import ExternalIdentity, SeenAssertion, SignInRequest, User, utcnow
from app.server.main import create_app
from app.sso import saml_providers
from app.sso.saml_keys import self_signed
from app.vocabulary import IdSource, SignInProtocol
from tests.app.conftest import in_process_client, sign_in
from tests.saml_idp import STUDENT_ID, Answer, IdentityProvider

# One app serves the whole module (``app_client``): its tests run on one test process in
# a row, so its background threads (outboxes, digest) never run beside another module's
# tests and their databases.
pytestmark = pytest.mark.xdist_group("saml")


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IdentityProvider]:
    provider = IdentityProvider(tmp_path_factory.mktemp("idp"))
    yield provider
    provider.stop()


def _configure(monkeypatch: pytest.MonkeyPatch, **entry: str) -> None:
    provider = {"name": "uni", "label": "University of Tests", **entry}
    monkeypatch.setattr(settings, "saml_idps", json.dumps([provider]))
    saml_providers.forget()


@pytest.fixture(scope="module")
def app_client(
    migrated_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """One app for the module (making one per test is most of a test's time); each test
    still has a database of its own (the app finds it through the settings). The app
    starts on a copy of its own: the default database is shared by the test processes,
    and two of them migrating it at once collide."""
    own = tmp_path_factory.mktemp("saml-start") / "start.db"
    shutil.copyfile(migrated_template, own)
    original = settings.database_url
    settings.database_url = f"sqlite:///{own}"
    try:
        with in_process_client() as client:
            yield client
    finally:
        settings.database_url = original


def _ready(
    client: TestClient, idp: IdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    _configure(monkeypatch, metadata_file=str(idp.metadata_file), student_id_attribute=STUDENT_ID)
    idp.misbehave = ""
    client.cookies.clear()
    idp.trust(client.get("/sso/saml/metadata").text)
    return client


@pytest.fixture
def saml_client(
    sqlite_database: str,
    app_client: TestClient,
    idp: IdentityProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> TestClient:
    """On SQLite: the refusals are the protocol's, not the database's."""
    return _ready(app_client, idp, monkeypatch)


@pytest.fixture
def both_databases_client(
    database: str,
    app_client: TestClient,
    idp: IdentityProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> TestClient:
    """On SQLite and PostgreSQL: what writes rows (accounts, pending requests, seen IDs)."""
    return _ready(app_client, idp, monkeypatch)


def _to_idp(client: TestClient, idp: IdentityProvider, path: str) -> Answer:
    started = client.get(path, follow_redirects=False)
    assert started.status_code == 303, started.text
    assert started.headers["location"].startswith(f"{idp.url}/sso?SAMLRequest=")
    page = httpx.get(started.headers["location"]).text  # the browser at the IdP
    action = re.search(r'action="([^"]+)"', page)
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page))
    assert action and set(fields) == {"SAMLResponse", "RelayState"}
    return Answer(action[1], fields)


def _post_back(client: TestClient, answer: Answer) -> httpx.Response:
    """The IdP's page posts cross-site: the browser sends no SameSite=Lax cookie."""
    client.cookies.clear()
    assert answer.action == "http://testserver/sso/saml/acs"
    return client.post("/sso/saml/acs", data=answer.fields, follow_redirects=False)


def _signed_in_as(client: TestClient) -> str | None:
    header = client.get("/account", follow_redirects=False)
    if header.status_code != 200:
        return None
    found = re.search(r'<meta name="csrf-token"', header.text)
    return header.text if found else None


def _counts() -> tuple[int, int]:
    with session_scope() as session:
        return (
            session.scalar(select(func.count()).select_from(User)) or 0,
            session.scalar(select(func.count()).select_from(ExternalIdentity)) or 0,
        )


def test_metadata_names_our_entity_id_acs_and_key(saml_client: TestClient) -> None:
    answer = saml_client.get("/sso/saml/metadata")
    assert answer.headers["content-type"].startswith("application/samlmetadata+xml")
    assert 'entityID="http://testserver/sso/saml/metadata"' in answer.text
    assert 'Location="http://testserver/sso/saml/acs"' in answer.text
    assert "X509Certificate" in answer.text and 'AuthnRequestsSigned="true"' in answer.text
    assert 'WantAssertionsSigned="true"' in answer.text
    key = grader_settings.data_dir / "saml_sp.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_a_learner_signs_in_through_the_idp_and_comes_back_to_the_same_account(
    both_databases_client: TestClient, idp: IdentityProvider
) -> None:
    saml_client = both_databases_client
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start?next=/courses")
    landed = _post_back(saml_client, answer)
    assert landed.status_code == 303 and landed.headers["location"] == "/courses"
    assert _signed_in_as(saml_client)
    with session_scope() as session:
        identity = session.scalars(select(ExternalIdentity)).one()
        assert (identity.issuer, identity.subject) == (idp.entity_id, "ada@uni.example")
        user = session.get(User, identity.user_id)
        assert user is not None and not accounts.has_password(user)
        assert (user.email, user.email_source) == ("ada@uni.example", IdSource.SSO)
        assert user.email_verified_at is not None and user.display_name == "Ada Lovelace"
        assert (user.student_id, user.student_id_source) == ("s1815", IdSource.SSO)
        first = user.id
    again = _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start"))
    assert again.status_code == 303 and _signed_in_as(saml_client)
    with session_scope() as session:
        assert session.scalars(select(ExternalIdentity.user_id)).one() == first


def test_without_eppn_the_persistent_name_id_is_the_subject(
    saml_client: TestClient, idp: IdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idp.person, "eppn", "")
    landed = _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start"))
    assert landed.status_code == 303
    with session_scope() as session:
        assert session.scalars(select(ExternalIdentity.subject)).one() == "pid-ada"


@pytest.mark.parametrize(
    ("misbehave", "said"),
    [
        ("unsigned", "is not signed with its key"),
        ("wrong_key", "is not signed with its key"),
        ("expired", "has expired"),
        ("other_audience", "meant for another site"),
        ("other_recipient", "not addressed to this site"),
    ],
)
def test_a_bad_answer_is_a_clear_page_that_signs_nobody_in(
    saml_client: TestClient, idp: IdentityProvider, misbehave: str, said: str
) -> None:
    idp.misbehave = misbehave
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start")
    before = _counts()
    refused = _post_back(saml_client, answer)
    assert refused.status_code == 400 and said in refused.text
    assert _counts() == before and not _signed_in_as(saml_client)
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(SeenAssertion)) == 0


def test_a_replayed_answer_is_refused(saml_client: TestClient, idp: IdentityProvider) -> None:
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start")
    assert _post_back(saml_client, answer).status_code == 303
    before = _counts()
    replayed = _post_back(saml_client, answer)
    assert replayed.status_code == 400 and "already used or expired" in replayed.text
    assert _counts() == before and not _signed_in_as(saml_client)


def test_an_assertion_seen_before_is_refused_in_an_answer_to_a_new_request(
    both_databases_client: TestClient, idp: IdentityProvider
) -> None:
    saml_client = both_databases_client
    idp.misbehave = "same_assertion_id"
    assert (
        _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start")).status_code == 303
    )
    second = _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start"))
    assert second.status_code == 400 and "already used to sign in" in second.text
    assert not _signed_in_as(saml_client)


def test_an_expired_pending_request_is_refused(
    saml_client: TestClient, idp: IdentityProvider
) -> None:
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start")
    with session_scope() as session:
        session.execute(update(SignInRequest).values(expires_at=utcnow() - timedelta(seconds=1)))
    refused = _post_back(saml_client, answer)
    assert refused.status_code == 400 and "expired" in refused.text
    assert _counts() == (0, 0)


BOMB = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
    '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&lol2;</samlp:Response>'
)


@pytest.mark.parametrize(
    ("response", "said"),
    [
        ("", "missing or too large"),
        ("x" * 61_000, "missing or too large"),
        ("x" * 70_000, "larger than this address accepts"),
        ("not base64 at all !!", "not a SAML response"),
        (base64.b64encode(b"<not-xml").decode(), "not valid for this site"),
        (base64.b64encode(BOMB.encode()).decode(), "not valid for this site"),
    ],
)
def test_garbage_is_a_clear_page(
    saml_client: TestClient, idp: IdentityProvider, response: str, said: str
) -> None:
    started = saml_client.get("/sso/saml/uni/start", follow_redirects=False)
    relay_state = parse_qs(urlparse(started.headers["location"]).query)["RelayState"][0]
    fields = {"SAMLResponse": response, "RelayState": relay_state}  # no need to ask the IdP
    refused = _post_back(saml_client, Answer("http://testserver/sso/saml/acs", fields))
    assert refused.status_code == (413 if len(response) > 64 * 1024 else 400)
    assert said in refused.text and _counts() == (0, 0)


def test_an_unknown_relay_state_or_none_is_refused(
    saml_client: TestClient, idp: IdentityProvider
) -> None:
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start")
    for relay in ("forged", ""):
        fields = {**answer.fields, "RelayState": relay}
        refused = _post_back(saml_client, Answer(answer.action, fields))
        assert refused.status_code == 400, refused.text
    assert _counts() == (0, 0)
    # the real one still works: a forged RelayState spends nothing
    assert _post_back(saml_client, answer).status_code == 303


def test_an_unknown_provider_is_not_found(saml_client: TestClient) -> None:
    answer = saml_client.get("/sso/saml/nobody/start")
    assert answer.status_code == 404 and "no such sign-in" in answer.text


def test_unreadable_metadata_refuses_that_sign_in_only(
    saml_client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _configure(monkeypatch, metadata_file=str(tmp_path / "missing.xml"))
    answer = saml_client.get("/sso/saml/uni/start")
    assert answer.status_code == 503 and "metadata file cannot be read" in answer.text
    assert saml_client.get("/login").status_code == 200
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(SignInRequest)) == 0


def test_metadata_from_a_url_and_an_idp_that_is_down(
    saml_client: TestClient, idp: IdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(monkeypatch, metadata_url=f"{idp.url}/metadata")
    assert (
        _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start")).status_code == 303
    )
    _configure(monkeypatch, metadata_url="http://127.0.0.1:9/metadata")  # nothing listens
    down = saml_client.get("/sso/saml/uni/start")
    assert down.status_code == 503 and "cannot be reached now" in down.text


def test_a_signed_in_learner_links_the_identity_to_their_account(
    saml_client: TestClient, idp: IdentityProvider
) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="grace", password="long test password")
    csrf = sign_in(saml_client, "grace")
    started = saml_client.post(
        "/sso/saml/uni/link", data={"csrf_token": csrf}, follow_redirects=False
    )
    assert started.status_code == 303
    page = httpx.get(started.headers["location"]).text
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page))
    cookies = dict(saml_client.cookies)
    handed = _post_back(saml_client, Answer("http://testserver/sso/saml/acs", fields))
    assert handed.status_code == 303 and handed.headers["location"].startswith("/sso/saml/linked")
    # Another browser (no session, or another account) cannot finish the link.
    stranger = saml_client.get(handed.headers["location"], follow_redirects=False)
    assert stranger.status_code == 403
    saml_client.cookies.clear()
    saml_client.cookies.update(cookies)
    done = saml_client.get(handed.headers["location"], follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/account"
    with session_scope() as session:
        identity = session.scalars(select(ExternalIdentity)).one()
        user = session.get(User, identity.user_id)
        assert user is not None and user.name == "grace"
    assert _counts() == (1, 1)


def test_linking_needs_the_form_token(saml_client: TestClient) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="grace", password="long test password")
    sign_in(saml_client, "grace")
    refused = saml_client.post("/sso/saml/uni/link", data={"csrf_token": "forged"})
    assert refused.status_code == 403
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(SignInRequest)) == 0


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("{}", "must be a JSON list"),
        ("[not json", "is not JSON"),
        ('[{"name": "Bad Name", "metadata_file": "x"}]', "name must be"),
        ('[{"name": "uni"}]', "exactly one of metadata_file and metadata_url"),
        ('[{"name": "uni", "metadata_file": "x", "colour": "red"}]', "unknown keys"),
        ("/nonexistent/idps.json", "cannot read /nonexistent/idps.json"),
    ],
)
def test_a_bad_provider_list_is_named(
    value: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "saml_idps", value)
    with pytest.raises(saml_providers.SamlSettingsError, match=said):
        saml_providers.providers()


def test_the_provider_list_may_be_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tmp_path / "idps.json"
    listed.write_text('[{"name": "uni", "label": "Uni", "metadata_url": "https://idp/md"}]')
    monkeypatch.setattr(settings, "saml_idps", str(listed))
    assert [p.label for p in saml_providers.providers()] == ["Uni"]


def test_at_start_a_bad_list_stops_and_unreadable_metadata_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(settings, "saml_idps", '[{"name": "uni"}]')
    with pytest.raises(saml_providers.SamlSettingsError):
        create_app()
    _configure(monkeypatch, metadata_file=str(tmp_path / "gone.xml"))
    create_app()
    assert "SAML identity provider uni" in caplog.text and "cannot be read" in caplog.text


def test_the_sign_in_page_has_a_button_for_each_idp(saml_client: TestClient) -> None:
    page = saml_client.get("/login?next=/courses").text
    assert 'href="/sso/saml/uni/start?next=/courses"' in page
    assert "Sign in with University of Tests" in page


def test_next_never_leaves_the_site(saml_client: TestClient, idp: IdentityProvider) -> None:
    answer = _to_idp(saml_client, idp, "/sso/saml/uni/start?next=//evil.example/x")
    assert _post_back(saml_client, answer).headers["location"] == "/"


def test_a_disabled_account_is_refused(saml_client: TestClient, idp: IdentityProvider) -> None:
    assert (
        _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start")).status_code == 303
    )
    with session_scope() as session:
        session.execute(update(User).values(disabled_at=utcnow()))
    refused = _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start"))
    assert refused.status_code == 403 and "disabled" in refused.text
    assert not _signed_in_as(saml_client)


def test_an_identity_of_another_account_is_not_linked(
    saml_client: TestClient, idp: IdentityProvider
) -> None:
    assert (
        _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start")).status_code == 303
    )
    with session_scope() as session:
        accounts.create_user(session=session, name="grace", password="long test password")
    csrf = sign_in(saml_client, "grace")
    started = saml_client.post(
        "/sso/saml/uni/link", data={"csrf_token": csrf}, follow_redirects=False
    )
    page = httpx.get(started.headers["location"]).text
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page))
    handed = saml_client.post("/sso/saml/acs", data=fields, follow_redirects=False)
    refused = saml_client.get(handed.headers["location"], follow_redirects=False)
    assert refused.status_code == 409 and "another jaxjudge account" in refused.text
    assert _counts() == (2, 1)


def test_the_operators_key_and_certificate_are_used(
    saml_client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key, cert = self_signed("operator's SP")
    (tmp_path / "sp.key").write_bytes(key)
    (tmp_path / "sp.crt").write_bytes(cert)
    monkeypatch.setattr(settings, "saml_sp_key_file", tmp_path / "sp.key")
    monkeypatch.setattr(settings, "saml_sp_cert_file", tmp_path / "sp.crt")
    body = b"".join(cert.strip().splitlines()[1:-1]).decode()
    assert body in saml_client.get("/sso/saml/metadata").text


def test_an_operators_key_that_is_not_there_stops_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(monkeypatch, metadata_url="https://idp.example/metadata")
    monkeypatch.setattr(settings, "saml_sp_key_file", tmp_path / "sp.key")
    with pytest.raises(saml_providers.SamlSettingsError, match="or neither"):
        saml_providers.check()
    monkeypatch.setattr(settings, "saml_sp_cert_file", tmp_path / "sp.crt")
    with pytest.raises(saml_providers.SamlSettingsError, match=r"sp\.key is missing"):
        saml_providers.check()


def test_an_assertion_by_another_idp_of_the_same_metadata_is_refused(
    saml_client: TestClient,
    idp: IdentityProvider,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """pysaml2 checks an assertion against the key of the issuer it names: in an aggregate
    (entity_id picks one IdP), another IdP there signs an assertion of its own, puts the
    configured IdP on the unsigned Response, and must not sign in as that IdP's user."""
    other = IdentityProvider(tmp_path)
    try:
        other.trust(saml_client.get("/sso/saml/metadata").text)
        other.person.mail = "mallory@other.example"
        both = "".join(re.sub(r"^<\?xml[^>]*>", "", m) for m in (idp.metadata, other.metadata))
        aggregate = tmp_path / "aggregate.xml"
        aggregate.write_text(
            f'<md:EntitiesDescriptor xmlns:md="{saml_providers.MD[1:-1]}">{both}'
            "</md:EntitiesDescriptor>"
        )
        _configure(monkeypatch, metadata_file=str(aggregate), entity_id=idp.entity_id)
        started = saml_client.get("/sso/saml/uni/start", follow_redirects=False)
        query = {k: v[0] for k, v in parse_qs(urlparse(started.headers["location"]).query).items()}
        verify = "saml2.request.AuthnRequest._verify"  # the request was not sent to it
        with mock.patch(verify, lambda request: request):
            answer = other.answer(query["SAMLRequest"], query["RelayState"])
        xml = base64.b64decode(answer.fields["SAMLResponse"]).decode()
        forged = xml.replace(other.entity_id, idp.entity_id, 1)  # the Response's Issuer only
        assert other.entity_id in forged  # still the assertion's issuer, under its signature
        fields = {**answer.fields, "SAMLResponse": base64.b64encode(forged.encode()).decode()}
        refused = _post_back(saml_client, Answer(answer.action, fields))
        assert refused.status_code == 400 and "another identity provider" in refused.text
        assert _counts() == (0, 0) and not _signed_in_as(saml_client)
    finally:
        other.stop()


def test_an_identity_made_by_another_provider_with_the_same_issuer_is_refused(
    saml_client: TestClient, idp: IdentityProvider
) -> None:
    """An IdP chooses its own entity id: one that claims the issuer of an OpenID provider
    (or of another IdP) configured here does not sign in as that provider's users."""
    with session_scope() as session:
        victim = accounts.create_user(session=session, name="victim", password="long test password")
        session.add(
            ExternalIdentity(
                user_id=victim.id,
                protocol=SignInProtocol.OIDC,
                provider="campus",
                issuer=idp.entity_id,
                subject="ada@uni.example",
            )
        )
    refused = _post_back(saml_client, _to_idp(saml_client, idp, "/sso/saml/uni/start"))
    assert refused.status_code == 403 and "another sign-in provider" in refused.text
    assert not _signed_in_as(saml_client)
    with session_scope() as session:
        assert session.scalars(select(User.email)).one() == ""
