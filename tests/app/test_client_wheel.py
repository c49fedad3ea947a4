"""The light client's wheel, as the server hands it out: every module of the client,
metadata pip reads, a RECORD whose hashes match, the same bytes each time."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from pathlib import Path

import jaxjudge_client
from fastapi.testclient import TestClient

from app.core import client_wheel
from app.web import client_download


def test_the_wheel_holds_the_client_and_a_record_that_matches(client: TestClient) -> None:
    answer = client.get(client_download.PATH)
    assert answer.status_code == 200
    assert answer.content == client_wheel.wheel()
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    modules = {p.name for p in Path(jaxjudge_client.__file__).parent.glob("*.py")}
    assert {n.split("/", 1)[1] for n in archive.namelist() if n.startswith("jaxjudge_client/")} == (
        modules
    )
    info = f"jaxjudge_client-{client_wheel.VERSION}.dist-info"
    assert "Requires-Python: >=3.9" in archive.read(f"{info}/METADATA").decode()
    for line in archive.read(f"{info}/RECORD").decode().splitlines():
        name, digest, size = line.split(",")
        if name.endswith("RECORD"):
            continue
        data = archive.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        assert (digest, int(size)) == ("sha256=" + expected.decode(), len(data))
