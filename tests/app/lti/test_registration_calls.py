"""Registration's calls out (app/lti/registration_calls.py): which addresses count as
public, and calls against real servers on 127.0.0.1 (plain and TLS) that record what
reached them."""

from __future__ import annotations

import socket
import time
from ipaddress import ip_address, ip_network
from typing import Any

import pytest

from app.lti import registration_calls
from app.lti.registration_calls import CallError, call, public, target
from tests.app.lti.probed import Probed

LOOPBACK = [ip_network("127.0.0.0/8"), ip_network("::1/128")]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("::ffff:8.8.8.8", True),  # IPv4-mapped: the IPv4 address decides
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("::127.0.0.1", False),  # IPv4-compatible (deprecated)
        ("2002:7f00:1::", False),  # 6to4 around 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 around 10.0.0.1
        ("64:ff9b::808:808", True),  # NAT64 around 8.8.8.8
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("fc00::1", False),
        ("fd12:3456::1", False),  # ULA
        ("169.254.169.254", False),  # the cloud's metadata service
        ("fe80::1", False),
        ("fec0::1", False),  # site-local (deprecated)
        ("100.64.0.1", False),  # CGNAT
        ("0.0.0.0", False),
        ("::", False),
        ("224.0.0.1", False),
        ("239.1.2.3", False),
        ("ff0e::1", False),
        ("240.0.0.1", False),  # reserved
        ("255.255.255.255", False),
        ("192.0.0.8", False),  # IETF protocol assignments
        ("192.0.2.1", False),  # documentation
        ("2001:db8::1", False),
        ("198.18.0.1", False),  # benchmarking
    ],
)
def test_only_public_addresses_are_public(address: str, expected: bool) -> None:
    assert public(ip_address(address)) is expected


def test_a_host_name_is_judged_by_the_addresses_it_resolves_to() -> None:
    with pytest.raises(CallError, match="not a public address"):
        target("https://localhost/.well-known/openid-configuration", private_networks=[])
    listed = target("http://localhost:8000/c?x=1", private_networks=LOOPBACK)
    assert (listed.host, listed.port, listed.path) == ("localhost", 8000, "/c?x=1")
    assert all(address.is_loopback for _f, _s, address in listed.sockaddrs)


def test_a_listed_network_is_reachable_but_plain_http_only_on_loopback() -> None:
    campus = [ip_network("10.20.0.0/16")]
    assert target("https://10.20.3.4/config", private_networks=campus).port == 443
    with pytest.raises(CallError, match="not a public address"):
        target("https://10.21.3.4/config", private_networks=campus)
    with pytest.raises(CallError, match="plain http"):
        target("http://10.20.3.4/config", private_networks=campus)
    with pytest.raises(CallError, match="plain http"):
        target("http://8.8.8.8/config", private_networks=campus)
    # An IPv4-mapped address is the IPv4 one, listed or not.
    assert target("http://[::ffff:127.0.0.1]:81/", private_networks=LOOPBACK).port == 81
    with pytest.raises(CallError, match="not a public address"):
        target("http://[::ffff:127.0.0.1]:81/", private_networks=[])


@pytest.mark.parametrize(
    "url",
    [
        "ftp://8.8.8.8/",
        "https:///nohost",
        "https://user:secret@8.8.8.8/",
        "https://8.8.8.8:99999/",
        "https://no-such-host.invalid/",
    ],
)
def test_malformed_or_unresolvable_urls_are_refused(url: str) -> None:
    with pytest.raises(CallError):
        target(url, private_networks=LOOPBACK)


def test_an_unlisted_private_address_is_never_connected_to(probed: Probed) -> None:
    for url in [f"{probed.url}/config", f"http://localhost:{probed.port}/config"]:
        with pytest.raises(CallError, match="not a public address"):
            call("GET", url, private_networks=[])
    assert probed.paths == []


def test_a_listed_address_answers(probed: Probed) -> None:
    assert call("GET", f"{probed.url}/config", private_networks=LOOPBACK) == (
        probed.configuration()
    )


def test_no_redirect_is_followed(probed: Probed) -> None:
    with pytest.raises(CallError, match="HTTP 302"):
        call("GET", f"{probed.url}/moved", private_networks=LOOPBACK)
    assert probed.paths == ["/moved"]


def test_the_call_connects_to_the_address_it_checked(
    probed: Probed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name is resolved once: a second resolution (DNS rebinding) is never asked."""
    asked: list[Any] = []
    resolve = socket.getaddrinfo

    def counted(host: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counted)
    url = f"http://localhost:{probed.port}/config"
    assert call("GET", url, private_networks=LOOPBACK)["issuer"] == probed.url
    assert asked == ["localhost"] and probed.paths == ["/config"]


def test_tls_checks_the_url_s_host_name_at_the_pinned_address(probed_tls: Probed) -> None:
    """Connected to 127.0.0.1 either way: the certificate (for ``localhost``) is checked
    against the URL's host name, which is also the server name sent."""
    url = f"https://localhost:{probed_tls.port}/config"
    answer = call("GET", url, private_networks=LOOPBACK, tls=probed_tls.client_tls)
    assert answer["issuer"] == probed_tls.url and probed_tls.server_names == ["localhost"]
    with pytest.raises(CallError, match="CERTIFICATE_VERIFY_FAILED"):
        call(
            "GET",
            f"https://127.0.0.1:{probed_tls.port}/config",
            private_networks=LOOPBACK,
            tls=probed_tls.client_tls,
        )
    with pytest.raises(CallError, match="CERTIFICATE_VERIFY_FAILED"):
        call("GET", url, private_networks=LOOPBACK)  # the system's CAs do not know it
    assert probed_tls.paths == ["/config"]


def test_answers_are_bounded_in_size_and_time(
    probed: Probed, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CallError, match="more than"):
        call("GET", f"{probed.url}/big", private_networks=LOOPBACK)
    with pytest.raises(CallError, match="not JSON"):
        call("GET", f"{probed.url}/text", private_networks=LOOPBACK)
    monkeypatch.setattr(registration_calls, "TOTAL_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(CallError, match="took more than 1 s"):
        call("GET", f"{probed.url}/slow", private_networks=LOOPBACK)
    assert time.monotonic() - started < 3


def test_an_unreachable_port_fails_as_a_call(probed: Probed) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(CallError, match="could not be reached"):
        call("GET", f"http://127.0.0.1:{port}/", private_networks=LOOPBACK)


def test_a_slow_answer_over_tls_is_cut_too(
    probed_tls: Probed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registration_calls, "TOTAL_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(CallError, match="took more than 1 s"):
        call(
            "GET",
            f"https://localhost:{probed_tls.port}/slow",
            private_networks=LOOPBACK,
            tls=probed_tls.client_tls,
        )
    assert time.monotonic() - started < 3
