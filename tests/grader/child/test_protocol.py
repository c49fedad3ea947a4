from __future__ import annotations

import io
import pickle
import struct

import numpy as np
import pytest

from grader.child import protocol
from grader.child.protocol import Kind, ProtocolError


def roundtrip(raw: bytes, max_data: int = 1 << 20) -> protocol.Frame | None:
    return protocol.read_frame(io.BytesIO(raw), max_data_bytes=max_data)


def test_frames_roundtrip_with_arrays() -> None:
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array(2.5), np.zeros((0,), np.int64)]
    specs, data = protocol.pack_arrays(arrays)
    frame = roundtrip(protocol.encode_frame(Kind.CASE_RESULT, {"outputs": specs}, data))
    assert frame is not None
    assert frame.kind is Kind.CASE_RESULT
    rebuilt = [
        protocol.unpack_array(s, frame.data, max_elements=100) for s in frame.meta["outputs"]
    ]
    for original, copy in zip(arrays, rebuilt, strict=True):
        assert copy.dtype == original.dtype
        assert copy.shape == original.shape
        np.testing.assert_array_equal(copy, original)
    assert rebuilt[0].flags.writeable  # a private copy, not a view of the frame


def test_clean_end_of_stream_is_none() -> None:
    assert roundtrip(b"") is None


@pytest.mark.parametrize(
    ("raw", "phrase"),
    [
        (b"JJF1\x04", "truncated frame header"),
        (b"XXXX" + b"\x00" * 16, "bad frame magic"),
        (struct.pack("<4sB3xIQ", b"JJF1", 99, 2, 0) + b"{}", "unknown frame kind"),
        (struct.pack("<4sB3xIQ", b"JJF1", 4, 10, 0) + b"{}", "truncated frame body"),
        (struct.pack("<4sB3xIQ", b"JJF1", 4, 2, 1 << 40), "exceeds"),
        (struct.pack("<4sB3xIQ", b"JJF1", 4, 4, 0) + b"[1] ", "not a JSON object"),
        (struct.pack("<4sB3xIQ", b"JJF1", 4, 11, 0) + b'{"a": NaN }', "non-finite"),
    ],
)
def test_malformed_frames_are_rejected(raw: bytes, phrase: str) -> None:
    with pytest.raises(ProtocolError, match=phrase):
        roundtrip(raw)


def test_pickle_payloads_are_just_bytes() -> None:
    # A pickled object as metadata is not JSON; it is never unpickled.
    payload = pickle.dumps({"verdict": "accepted"})
    raw = struct.pack("<4sB3xIQ", b"JJF1", 4, len(payload), 0) + payload
    with pytest.raises(ProtocolError):
        roundtrip(raw)


@pytest.mark.parametrize(
    ("spec", "phrase"),
    [
        ({"dtype": "object", "shape": [1], "offset": 0, "nbytes": 8}, "not allowed"),
        ({"dtype": "float32", "shape": [1] * 9, "offset": 0, "nbytes": 4}, "at most 8"),
        ({"dtype": "float32", "shape": [-1], "offset": 0, "nbytes": 4}, "non-negative"),
        ({"dtype": "float32", "shape": [True], "offset": 0, "nbytes": 4}, "non-negative"),
        (
            {"dtype": "float32", "shape": [10**9], "offset": 0, "nbytes": 4 * 10**9},
            "exceed the limit",
        ),
        # No elements, but dimensions that would carry two numbers the child chose.
        ({"dtype": "float32", "shape": [0, 40, 30], "offset": 0, "nbytes": 0}, "exceed the limit"),
        ({"dtype": "float32", "shape": [2], "offset": 0, "nbytes": 4}, "do not match"),
        ({"dtype": "float32", "shape": [2], "offset": 4, "nbytes": 8}, "do not match"),
        ("float32", "not an object"),
    ],
)
def test_array_specs_are_validated(spec: object, phrase: str) -> None:
    with pytest.raises(ProtocolError, match=phrase):
        protocol.unpack_array(spec, b"\x00" * 8, max_elements=1000)


def test_an_empty_array_within_the_limit_still_travels() -> None:
    spec = {"dtype": "float32", "shape": [0, 40, 25], "offset": 0, "nbytes": 0}
    assert protocol.unpack_array(spec, b"", max_elements=1000).shape == (0, 40, 25)


def test_unlisted_dtypes_cannot_be_packed() -> None:
    with pytest.raises(ValueError, match="cannot travel"):
        protocol.pack_arrays([np.array(["a"])])


def test_big_endian_input_arrives_native() -> None:
    specs, data = protocol.pack_arrays([np.array([1.5, -2.0], dtype=">f8")])
    rebuilt = protocol.unpack_array(specs[0], data, max_elements=10)
    np.testing.assert_array_equal(rebuilt, [1.5, -2.0])
