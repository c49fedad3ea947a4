"""A web server on 127.0.0.1 that records every request it gets: what a registration
URL pointing into jaxjudge's own network would reach. Over TLS (``tls=True``) it
holds a certificate for the name ``localhost`` alone, from a CA of its own
(``client_tls`` trusts it), and records the server name each client asked for."""

from __future__ import annotations

import datetime
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.lti import registration_calls


def _certificate(
    name: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: Any, ca: bool
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False
        )
    return builder.sign(signer, hashes.SHA256())


def _tls_contexts(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """The server's context (a certificate for ``localhost``) and a client's that
    trusts the CA which signed it."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "probed test CA")])
    ca = _certificate("probed test CA", ca_key, ca_name, ca_key, ca=True)
    leaf = _certificate("localhost", key, ca_name, ca_key, ca=False)
    (folder / "cert.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


class Probed:
    def __init__(self, tls_folder: Path | None = None) -> None:
        self.paths: list[str] = []
        self.server_names: list[str | None] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]
        self.client_tls: ssl.SSLContext | None = None
        scheme = "http"
        if tls_folder is not None:
            server_tls, self.client_tls = _tls_contexts(tls_folder)
            server_tls.sni_callback = lambda _sock, name, _context: self.server_names.append(name)
            self._server.socket = server_tls.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def configuration(self) -> dict[str, str]:
        """A valid OpenID configuration, issued by this server."""
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/auth",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "registration_endpoint": f"{self.url}/register",
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        probed = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                probed.paths.append(self.path)
                if self.path == "/config":
                    json_type = {"Content-Type": "application/json"}
                    self._send(200, json.dumps(probed.configuration()).encode(), json_type)
                elif self.path == "/moved":  # to a page that would answer
                    self._send(302, b"", {"Location": "/config"})
                elif self.path == "/text":
                    self._send(200, b"an admin page", {"Content-Type": "text/html"})
                elif self.path == "/big":
                    body = b'"' + b"x" * registration_calls.MAX_BODY + b'"'
                    self._send(200, body, {"Content-Type": "application/json"})
                elif self.path == "/slow":  # a byte a while: no single read ever times out
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    try:
                        for _ in range(100):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.2)
                    except OSError:
                        pass  # the client hung up
                else:
                    self._send(404, b'{"error": "not found"}', {})

        return Handler
