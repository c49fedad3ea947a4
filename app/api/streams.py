"""How many verdict streams (Server-Sent Events, app/api/routes/submissions.py) a
server holds open, and how each behaves. A stream holds no database connection
and no admission slot while it waits (app/core/admission.py lets it past): it
looks at the submission the moment a worker of this process says it changed
(app/grading/doorbell.py ``changes``), and every ``LOOK_SECONDS`` in any case (a
worker in another process), with a connection of its own for that moment. Past ``MAX_STREAMS`` a new one is refused with 503 and the page
polls instead, as it always could."""

from __future__ import annotations

MAX_STREAMS = 500
STREAM_SECONDS = 120.0  # then ``again``: the page reads the state once more and goes on
KEEP_ALIVE_SECONDS = 15.0  # a comment line, so proxies keep the connection
LOOK_SECONDS = 0.2

_open = 0  # only the event loop's thread changes it


def room() -> bool:
    """Whether a new stream may open. It is counted once it starts: one refused
    or dropped before starting leaves nothing to count back."""
    return _open < MAX_STREAMS


def opened() -> None:
    global _open
    _open += 1


def closed() -> None:
    global _open
    _open = max(0, _open - 1)


def count() -> int:
    return _open
