"""A SAML 2.0 identity provider for the tests: pysaml2's own IdP (``saml2.server.Server``)
with its own key and self-signed certificate, served over HTTP on 127.0.0.1.

``/metadata`` is its metadata; ``/sso`` (HTTP-Redirect) reads our AuthnRequest,
signs in ``person`` without asking, and answers with a page whose form posts a signed
Response to the ACS the request names (a script submits it; a button too). It trusts
the SP whose metadata it is given (``trust``). ``misbehave`` makes the next answers
wrong in one way: ``unsigned``, ``wrong_key`` (signed by a key not in its metadata),
``expired``, ``other_audience``, ``other_recipient``, ``same_assertion_id`` (every
assertion with one ID). ``last_form`` is the last answer's fields, to replay.
"""

from __future__ import annotations

import base64
import contextlib
import html
import threading
import warnings
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock
from urllib.parse import parse_qs, urlparse

from app.sso.saml_keys import self_signed

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="CFB has been moved")
    from saml2 import BINDING_HTTP_REDIRECT, s_utils
    from saml2.config import IdPConfig
    from saml2.metadata import entity_descriptor
    from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID
    from saml2.server import Server

URI = "urn:oasis:names:tc:SAML:2.0:attrname-format:uri"
PASSWORD = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
STUDENT_ID = "urn:oid:1.3.6.1.4.1.25178.1.2.14"  # schacPersonalUniqueCode


@dataclass
class Person:
    eppn: str = "ada@uni.example"
    mail: str = "ada@uni.example"
    display_name: str = "Ada Lovelace"
    student_id: str = "s1815"
    persistent_id: str = "pid-ada"

    def identity(self) -> dict[str, list[str]]:
        found = {
            "eduPersonPrincipalName": [self.eppn],
            "mail": [self.mail],
            "displayName": [self.display_name],
            "schacPersonalUniqueCode": [self.student_id],
        }
        return {k: v for k, v in found.items() if v[0]}


@dataclass
class Answer:
    action: str
    fields: dict[str, str] = field(default_factory=dict)


class IdentityProvider:
    def __init__(self, folder: Path, host: str = "127.0.0.1") -> None:
        self.folder = folder
        self.person = Person()
        self.misbehave = ""
        self.last_form: Answer | None = None
        self.sp_metadata = ""
        self._server = ThreadingHTTPServer((host, 0), self._handler())
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self.entity_id = f"{self.url}/metadata"
        self.key_file, self.cert_file = self._pair("idp")
        self.other_key_file, self.other_cert_file = self._pair("stranger")
        self.metadata = str(entity_descriptor(self._config(self.key_file, self.cert_file)))
        self.metadata_file = folder / "idp-metadata.xml"
        self.metadata_file.write_text(self.metadata)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _pair(self, stem: str) -> tuple[str, str]:
        key, cert = self_signed(stem)
        (self.folder / f"{stem}.key").write_bytes(key)
        (self.folder / f"{stem}.crt").write_bytes(cert)
        return str(self.folder / f"{stem}.key"), str(self.folder / f"{stem}.crt")

    def _config(self, key_file: str, cert_file: str, minutes: int = 5) -> IdPConfig:
        config = IdPConfig()
        config.load(
            {
                "entityid": self.entity_id,
                "key_file": key_file,
                "cert_file": cert_file,
                "xmlsec_binary": "/usr/bin/xmlsec1",
                "metadata": {"inline": [self.sp_metadata]} if self.sp_metadata else {},
                "service": {
                    "idp": {
                        "endpoints": {
                            "single_sign_on_service": [(f"{self.url}/sso", BINDING_HTTP_REDIRECT)]
                        },
                        "name_id_format": [NAMEID_FORMAT_PERSISTENT],
                        "policy": {
                            "default": {
                                "lifetime": {"minutes": minutes},
                                "attribute_restrictions": None,
                                "name_form": URI,
                            }
                        },
                    }
                },
            }
        )
        return config

    def trust(self, sp_metadata: str) -> None:
        self.sp_metadata = sp_metadata

    def answer(self, saml_request: str, relay_state: str) -> Answer:
        """What the IdP's page posts, for this AuthnRequest (HTTP-Redirect encoded)."""
        signing = (
            (self.other_key_file, self.other_cert_file)
            if self.misbehave == "wrong_key"
            else (self.key_file, self.cert_file)
        )
        minutes = -10 if self.misbehave == "expired" else 5
        idp = Server(config=self._config(*signing, minutes=minutes))
        request = idp.parse_authn_request(saml_request, BINDING_HTTP_REDIRECT).message
        sp_entity_id = str(request.issuer.text)
        acs = str(request.assertion_consumer_service_url)
        audience = "https://elsewhere.example/sp" if self.misbehave == "other_audience" else None
        destination = (
            "https://elsewhere.example/acs" if self.misbehave == "other_recipient" else acs
        )
        with (
            mock.patch.object(s_utils, "sid", return_value="id-the-same-every-time")
            if (self.misbehave == "same_assertion_id")
            else contextlib.nullcontext()
        ):
            response = idp.create_authn_response(
                self.person.identity(),
                in_response_to=request.id,
                destination=destination,
                sp_entity_id=audience or sp_entity_id,
                name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text=self.person.persistent_id),
                sign_assertion=self.misbehave != "unsigned",
                sign_response=False,
                authn={"class_ref": PASSWORD},
            )
        xml = str(response)
        answer = Answer(
            acs,
            {"SAMLResponse": base64.b64encode(xml.encode()).decode(), "RelayState": relay_state},
        )
        self.last_form = answer
        return answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: str, kind: str) -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/metadata":
                    return self._send(200, provider.metadata, "application/samlmetadata+xml")
                if url.path != "/sso":
                    return self._send(404, "not here", "text/plain")
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                answer = provider.answer(query["SAMLRequest"], query.get("RelayState", ""))
                return self._send(200, auto_post(answer), "text/html")

        return Handler

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def auto_post(answer: Answer) -> str:
    inputs = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in answer.fields.items()
    )
    return (
        '<!doctype html><html><body onload="document.forms[0].submit()">'
        f'<form method="post" action="{html.escape(answer.action)}">{inputs}'
        '<button type="submit">Continue</button></form></body></html>'
    )
