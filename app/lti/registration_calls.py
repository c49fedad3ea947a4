"""The calls Dynamic Registration makes to URLs that whoever holds an invitation chose.

Such a URL must not make jaxjudge a window into its own network (SSRF: the cloud's
metadata service, the database, an admin page on loopback). So a call:

- resolves the host once and refuses it unless every address it resolves to is
  public (``public``), or lies in a network the operator listed in
  JAXJUDGE_LTI_REGISTRATION_PRIVATE_NETWORKS (a campus LMS, the tests);
- connects to the address it checked, never to a second resolution of the name
  (which could answer differently: DNS rebinding), and checks the connected peer
  again; the Host header, TLS's server name and the certificate check keep the URL's
  host name;
- goes over https, or plain http to a listed loopback address only;
- follows no redirect, reads at most ``MAX_BODY`` bytes, and takes at most
  ``TOTAL_SECONDS`` from connecting to the last byte, whatever pace the far side
  keeps.

Every failure is one ``CallError`` whose message is for jaxjudge's log only.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Any
from urllib.parse import urlsplit

TOTAL_SECONDS = 10.0
MAX_BODY = 256 * 1024  # an OpenID configuration or a registration answer: a few KiB

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

# Special-purpose ranges that this Python's ``is_global`` calls global (its table
# changed across 3.12 releases): IETF protocol assignments, deprecated site-local.
_NOT_PUBLIC = (ip_network("192.0.0.0/24"), ip_network("fec0::/10"))
_NAT64 = ip_network("64:ff9b::/96")  # IPv4 addresses behind a NAT64 gateway


class CallError(Exception):
    """A registration call failed or was refused; the message is for the log."""


def unwrapped(address: Address) -> Address:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), else the address:
    a connection to ``::ffff:127.0.0.1`` goes to 127.0.0.1."""
    if isinstance(address, IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def public(address: Address) -> bool:
    """Reachable on the public internet: not loopback, private (RFC 1918, ULA),
    link-local, CGNAT, unspecified, documentation, reserved or multicast."""
    address = unwrapped(address)
    return (
        address.is_global
        and not address.is_multicast
        and not address.is_reserved
        and not any(address.version == n.version and address in n for n in _NOT_PUBLIC)
    )


def _listed(address: Address, networks: Sequence[Network]) -> bool:
    # ``in`` compares the bits alone, so the versions are compared first.
    candidates = {address, unwrapped(address)}
    return any(a.version == n.version and a in n for a in candidates for n in networks)


@dataclass(frozen=True)
class Target:
    """A URL whose every address was checked; ``sockaddrs`` are the ones to connect to."""

    scheme: str
    host: str  # as the URL names it: the Host header and TLS's server name
    port: int
    path: str  # with the query
    sockaddrs: tuple[tuple[int, Any, Address], ...]  # (family, sockaddr, address checked)


def target(url: str, *, private_networks: Sequence[Network]) -> Target:
    """``url`` resolved and checked, or CallError saying why not."""
    parts = urlsplit(url)
    if parts.scheme not in {"https", "http"} or not parts.hostname:
        raise CallError(f"not an http(s) URL: {url[:200]!r}")
    if parts.username is not None or parts.password is not None:
        raise CallError(f"a URL with credentials: {parts.hostname[:200]!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise CallError(f"not a port: {url[:200]!r}") from None
    host = parts.hostname
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise CallError(f"{host[:200]} does not resolve: {error}") from None
    sockaddrs = []
    for family, _type, _proto, _name, sockaddr in found:
        if family not in {socket.AF_INET, socket.AF_INET6}:
            continue
        address = ip_address(str(sockaddr[0]).split("%", 1)[0])
        listed = _listed(address, private_networks)
        if not (listed or public(address)):
            raise CallError(
                f"{host[:200]} resolves to {address}, which is not a public address"
                " (JAXJUDGE_LTI_REGISTRATION_PRIVATE_NETWORKS lists the others allowed)"
            )
        if parts.scheme == "http" and not (listed and unwrapped(address).is_loopback):
            raise CallError(f"plain http to {host[:200]} ({address}), not a listed loopback")
        sockaddrs.append((family, sockaddr, address))
    if not sockaddrs:
        raise CallError(f"{host[:200]} has no IP address")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port, path, tuple(sockaddrs))


def _connect(found: Target, deadline: float) -> socket.socket:
    """A connection to one of the checked addresses, its peer checked again."""
    errors = []
    for family, sockaddr, address in found.sockaddrs:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            sock.connect(sockaddr)
            peer = ip_address(str(sock.getpeername()[0]).split("%", 1)[0])
        except OSError as error:
            sock.close()
            errors.append(f"{address}: {error}")
            continue
        if peer != address:
            sock.close()
            raise CallError(f"connected to {peer}, not the checked {address}")
        return sock
    raise CallError(f"{found.host[:200]} could not be reached ({'; '.join(errors)})")


class _PinnedConnection(http.client.HTTPConnection):
    """HTTP(S) to ``found``'s checked addresses, never to a new resolution of its host."""

    def __init__(self, found: Target, tls: ssl.SSLContext | None, deadline: float) -> None:
        self.default_port = 443 if tls else 80  # the Host header names non-default ports
        super().__init__(found.host, found.port, timeout=TOTAL_SECONDS)
        self._found, self._tls, self._deadline = found, tls, deadline
        self.cut = False  # set by the watchdog
        # The socket, for the watchdog: http.client drops ``sock`` once the response
        # holds it (an answer that closes the connection).
        self.pinned: socket.socket | None = None

    def connect(self) -> None:
        sock = _connect(self._found, self._deadline)
        if self._tls is None:
            self.sock = self.pinned = sock
            return
        wrapped = self._tls.wrap_socket(
            sock, server_hostname=self._found.host, do_handshake_on_connect=False
        )
        self.sock = self.pinned = wrapped  # before the handshake: a slow one is cut too
        wrapped.do_handshake()


def _cut(connection: _PinnedConnection) -> None:
    """The watchdog: shut the socket down under a call that outlived TOTAL_SECONDS (a
    far side that trickles a byte at a time never trips a per-read timeout)."""
    connection.cut = True
    if connection.pinned is not None:
        with contextlib.suppress(OSError):
            # socket.socket's own shutdown: an SSLSocket's would touch the TLS state,
            # which the calling thread is using.
            socket.socket.shutdown(connection.pinned, socket.SHUT_RDWR)


def call(
    method: str,
    url: str,
    *,
    private_networks: Sequence[Network],
    json_body: Any = None,
    headers: dict[str, str] | None = None,
    tls: ssl.SSLContext | None = None,
) -> Any:
    """The JSON a 2xx answer carries; any other outcome is CallError. ``tls``: the
    context for https (default: the system's CAs, the host name checked)."""
    found = target(url, private_networks=private_networks)
    context = (tls or ssl.create_default_context()) if found.scheme == "https" else None
    sent = {"Accept": "application/json", **(headers or {})}
    body = None
    if json_body is not None:
        body = json.dumps(json_body).encode()
        sent["Content-Type"] = "application/json"
    deadline = time.monotonic() + TOTAL_SECONDS
    connection = _PinnedConnection(found, context, deadline)
    watchdog = threading.Timer(TOTAL_SECONDS, _cut, (connection,))
    watchdog.start()
    try:
        connection.request(method, found.path, body=body, headers=sent)
        response = connection.getresponse()
        raw = response.read(MAX_BODY + 1)
        status = response.status
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise CallError(f"{method} {url[:200]} failed: {error!r}") from None
    finally:
        watchdog.cancel()
        watchdog.join()  # never cut a socket that close() below is closing
        connection.close()
        if connection.cut:  # whatever was read, or raised, under it
            raise CallError(f"{method} {url[:200]} took more than {TOTAL_SECONDS:g} s")
    if not 200 <= status < 300:  # a redirect included: it is not followed
        raise CallError(f"{method} {url[:200]} answered HTTP {status}")
    if len(raw) > MAX_BODY:
        raise CallError(f"{method} {url[:200]} answered more than {MAX_BODY} bytes")
    try:
        return json.loads(raw)
    except ValueError:
        raise CallError(f"{method} {url[:200]} answered something that is not JSON") from None
