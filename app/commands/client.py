"""The HTTP client behind `jaxjudge submit`, `courses`, `grades` and the other
commands that talk to a server: the light client's (clients/python, installed
beside the platform), so there is one copy for the terminal and the notebook."""

from jaxjudge_client.errors import CommandError
from jaxjudge_client.http import ApiClient

__all__ = ["ApiClient", "CommandError"]
