"""Where the server is and which token to send: an argument, else the environment
(``JAXJUDGE_SERVER``, ``JAXJUDGE_TOKEN``), else a config file (JSON with
``server`` and ``token``: ``$JAXJUDGE_CONFIG``, or ``jaxjudge/client.json`` under
``$XDG_CONFIG_HOME`` or ``~/.config``). In a notebook a missing token is asked for
without echo and kept in the kernel's memory only, never in the notebook."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from jaxjudge_client.errors import CommandError
from jaxjudge_client.http import ApiClient

DEFAULT_SERVER = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Connection:
    server: str
    token: str

    def client(self, *, timeout: float = 30.0) -> ApiClient:
        return ApiClient(self.server, self.token, timeout=timeout)


def config_path() -> Path:
    explicit = os.environ.get("JAXJUDGE_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "jaxjudge" / "client.json"


def _config() -> dict[str, str]:
    path = config_path()
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise CommandError(f"{path}: not a JSON object with server and token ({error})") from None
    if not isinstance(found, dict):
        raise CommandError(f"{path}: not a JSON object with server and token")
    return {key: value for key, value in found.items() if isinstance(value, str)}


def address(server: str | None = None) -> str:
    """The server's address: the argument, the environment, the config file, or the
    local default."""
    found = server or os.environ.get("JAXJUDGE_SERVER") or _config().get("server")
    return (found or DEFAULT_SERVER).rstrip("/")


def resolve(
    server: str | None = None,
    token: str | None = None,
    *,
    ask: Callable[[str], str] | None = None,
) -> Connection:
    """The connection from arguments, environment and config file, in that order;
    ``ask`` (a prompt that does not echo) fills a missing token where a person is
    there to type it."""
    server = address(server)
    token = token or os.environ.get("JAXJUDGE_TOKEN") or _config().get("token")
    if not token and ask is not None:
        token = ask(f"API token for {server} (make one on {server}/account): ").strip()
    if not token:
        raise CommandError(
            f"no API token: make one on {server}/account (API tokens), then set"
            " JAXJUDGE_TOKEN or pass --token"
        )
    return Connection(server, token)
