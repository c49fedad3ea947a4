"""Where the code to send comes from: a file, standard input (``-``), or a string."""

from __future__ import annotations

import os
import stat
import sys

from jaxjudge_client.errors import CommandError

# The server's own limit is 256 KiB; this only keeps a wrong path (a disk image, a
# device) from being read whole before the server refuses it.
MAX_SOURCE_BYTES = 1 << 20


def read_code(path: str) -> str:
    """The text of ``path`` (``-``: standard input), UTF-8, a byte-order mark allowed.
    Never blocks on a FIFO, never reads a device without end."""
    if path == "-":
        data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
        return _decoded(data, "standard input")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except OSError as error:
        raise CommandError(f"{path}: cannot be opened ({error.strerror})") from None
    with os.fdopen(fd, "rb") as opened:
        if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
            raise CommandError(f"{path}: not a regular file")
        return _decoded(opened.read(MAX_SOURCE_BYTES + 1), path)


def _decoded(data: bytes, where: str) -> str:
    if len(data) > MAX_SOURCE_BYTES:
        raise CommandError(f"{where}: more than {MAX_SOURCE_BYTES // 1024} KiB of code")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CommandError(f"{where}: not UTF-8 text") from None
