"""The light client (clients/python) as a wheel the server hands out, so a learner
installs it with one line in Colab or Jupyter from the server they use, which
needs no package index and always matches that server:

    %pip install https://judge.example.org/client/jaxjudge_client-0.1.0-py3-none-any.whl

A pure-Python wheel is a zip of the package and its metadata (PEP 427, PEP 376's
RECORD); it is built once, in memory, from the installed client's own files."""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import zipfile
from pathlib import Path

import jaxjudge_client

VERSION = jaxjudge_client.__version__
FILENAME = f"jaxjudge_client-{VERSION}-py3-none-any.whl"
_INFO = f"jaxjudge_client-{VERSION}.dist-info"
_METADATA = f"""Metadata-Version: 2.1
Name: jaxjudge-client
Version: {VERSION}
Summary: Submit to a jaxjudge server from a terminal, a script or a notebook.
Requires-Python: >=3.9
"""
_WHEEL = """Wheel-Version: 1.0
Generator: jaxjudge
Root-Is-Purelib: true
Tag: py3-none-any
"""
_ENTRY_POINTS = "[console_scripts]\njaxjudge-client = jaxjudge_client.cli:main\n"
# Fixed times keep the wheel's bytes the same for the same client.
_STAMP = (2026, 1, 1, 0, 0, 0)


def _digest(data: bytes) -> str:
    raw = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + raw.decode("ascii")


@functools.cache
def wheel() -> bytes:
    package = Path(jaxjudge_client.__file__).parent
    files = {
        f"jaxjudge_client/{path.name}": path.read_bytes() for path in sorted(package.glob("*.py"))
    }
    files |= {
        f"{_INFO}/METADATA": _METADATA.encode(),
        f"{_INFO}/WHEEL": _WHEEL.encode(),
        f"{_INFO}/entry_points.txt": _ENTRY_POINTS.encode(),
    }
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files.items())
    files[f"{_INFO}/RECORD"] = (record + f"{_INFO}/RECORD,,\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, _STAMP), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()
