"""The child's stdout and stderr: drained with a byte cap, split at the hidden phase.

Everything the child prints is read by a thread of the parent; past
``limit`` bytes the child is killed (output limit exceeded). The first
``keep`` bytes are kept for people to read. When the hidden cases are about
to be sent, ``cut()`` closes the learner's part: bytes read after it may have
been produced while hidden inputs were in the child's memory, so they are
kept apart (``hidden``), for staff only. The cut errs on the safe side: a byte
still in the pipe at the cut counts as hidden, never the other way round.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Callable
from typing import BinaryIO


class OutputDrain:
    def __init__(self, keep: int, limit: int, on_limit: Callable[[], None]) -> None:
        self.keep, self.limit, self.on_limit = keep, limit, on_limit
        self.shown = bytearray()
        self.hidden = bytearray()
        self.total = 0
        self.shown_total = 0
        self.limit_hit = False
        self._after_cut = False
        self._lock = threading.Lock()
        self._stream: BinaryIO | None = None

    def read_all(self, stream: BinaryIO) -> None:
        self._stream = stream
        fd = stream.fileno()
        with contextlib.suppress(OSError, ValueError):
            # os.read returns what is there; a buffered read(n) would wait for n bytes.
            while chunk := os.read(fd, 65536):
                self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            kept = self.hidden if self._after_cut else self.shown
            if not self._after_cut:
                self.shown_total += len(chunk)
            if len(kept) < self.keep:
                kept += chunk[: self.keep - len(kept)]
            hit = self.total > self.limit and not self.limit_hit
            self.limit_hit = self.limit_hit or hit
        if hit:
            self.on_limit()

    def _pending(self) -> int:
        if self._stream is None:
            return 0
        try:
            raw = fcntl.ioctl(self._stream.fileno(), termios.FIONREAD, struct.pack("i", 0))
        except (OSError, ValueError):
            return 0
        return int(struct.unpack("i", raw)[0])

    def cut(self, settle_seconds: float = 0.1) -> None:
        """From now on, output is the hidden phase's. First give what the child
        flushed before asking for the hidden cases a moment to arrive."""
        deadline = time.monotonic() + settle_seconds
        while self._pending() and time.monotonic() < deadline:
            time.sleep(0.005)
        with self._lock:
            self._after_cut = True

    @property
    def shown_truncated(self) -> bool:
        return self.shown_total > len(self.shown)
