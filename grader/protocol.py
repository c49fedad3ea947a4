"""The framed channel between the grading process and a child (both sides).

Every message is one frame::

    b"JJF1" | kind: u8 | 3 zero bytes | meta length: u32 LE | data length: u64 LE | meta | data

``meta`` is a small UTF-8 JSON object; ``data`` is raw bytes (array buffers,
little-endian). Nothing is ever pickled. Arrays travel as a whitelisted dtype
name, a bounded shape and an offset into ``data``; the receiver rebuilds them
from bytes with ``numpy.frombuffer`` and so never runs code the sender chose.

This module imports only the standard library and numpy, because the child
loads it inside the sandbox before any learner code runs.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, BinaryIO

import numpy as np

MAGIC = b"JJF1"
_HEADER = struct.Struct("<4sB3xIQ")
HEADER_SIZE = _HEADER.size

MAX_META_BYTES = 256 * 1024
MAX_NDIM = 8

# Dtypes allowed on the wire. bool and complex travel so that the parent can
# say precisely why they are rejected; anything else never leaves the child.
WIRE_DTYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    }
)


class Kind(IntEnum):
    JOB = 1  # parent -> child: what to run
    HELLO = 2  # child -> parent: runtime is imported and ready
    SOLUTION_ERROR = 3  # child -> parent: a solution failed before its cases ran
    CASE_RESULT = 4  # child -> parent: one case's outputs
    CASE_ERROR = 5  # child -> parent: one case raised
    DONE = 6  # child -> parent: all solutions finished


class ProtocolError(Exception):
    """A frame was malformed, truncated, oversized or out of place."""


@dataclass(frozen=True)
class Frame:
    kind: Kind
    meta: dict[str, Any]
    data: bytes = b""


def encode_frame(kind: Kind, meta: dict[str, Any], data: bytes = b"") -> bytes:
    meta_bytes = json.dumps(meta, separators=(",", ":"), allow_nan=False).encode()
    return _HEADER.pack(MAGIC, int(kind), len(meta_bytes), len(data)) + meta_bytes + data


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _reject_constant(name: str) -> float:
    raise ProtocolError(f"non-finite number {name} in frame metadata")


def read_frame(stream: BinaryIO, *, max_data_bytes: int) -> Frame | None:
    """Read one frame; ``None`` on a clean end of stream before a header."""
    header = _read_exact(stream, HEADER_SIZE)
    if not header:
        return None
    if len(header) != HEADER_SIZE:
        raise ProtocolError("truncated frame header")
    magic, kind_value, meta_len, data_len = _HEADER.unpack(header)
    if magic != MAGIC:
        raise ProtocolError("bad frame magic")
    try:
        kind = Kind(kind_value)
    except ValueError:
        raise ProtocolError(f"unknown frame kind {kind_value}") from None
    if meta_len > MAX_META_BYTES:
        raise ProtocolError(f"frame metadata of {meta_len} bytes exceeds {MAX_META_BYTES}")
    if data_len > max_data_bytes:
        raise ProtocolError(f"frame data of {data_len} bytes exceeds {max_data_bytes}")
    meta_bytes = _read_exact(stream, meta_len)
    data = _read_exact(stream, data_len)
    if len(meta_bytes) != meta_len or len(data) != data_len:
        raise ProtocolError("truncated frame body")
    try:
        meta = json.loads(meta_bytes.decode(), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProtocolError(f"frame metadata is not JSON: {error}") from None
    if not isinstance(meta, dict):
        raise ProtocolError("frame metadata is not a JSON object")
    return Frame(kind, meta, data)


def array_spec(array: np.ndarray[Any, Any], offset: int) -> dict[str, Any]:
    return {
        "dtype": array.dtype.name,
        "shape": list(array.shape),
        "offset": offset,
        "nbytes": array.nbytes,
    }


def pack_arrays(arrays: list[np.ndarray[Any, Any]]) -> tuple[list[dict[str, Any]], bytes]:
    """Lay arrays end to end (little-endian, C order); return their specs and the buffer."""
    specs: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    offset = 0
    for array in arrays:
        if array.dtype.name not in WIRE_DTYPES:
            raise ValueError(f"dtype {array.dtype.name} cannot travel on the channel")
        little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        raw = little.tobytes()
        specs.append(array_spec(array, offset))
        chunks.append(raw)
        offset += len(raw)
    return specs, b"".join(chunks)


def _expect_int(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ProtocolError(f"{what} must be a non-negative integer")
    return value


def unpack_array(spec: Any, data: bytes, *, max_elements: int) -> np.ndarray[Any, Any]:
    """Rebuild one array from its spec, validating every field against ``data``."""
    if not isinstance(spec, dict):
        raise ProtocolError("array spec is not an object")
    dtype_name = spec.get("dtype")
    if dtype_name not in WIRE_DTYPES:
        raise ProtocolError(f"dtype {dtype_name!r} is not allowed on the channel")
    shape_value = spec.get("shape")
    if not isinstance(shape_value, list) or len(shape_value) > MAX_NDIM:
        raise ProtocolError(f"shape must be a list of at most {MAX_NDIM} dimensions")
    shape = tuple(_expect_int(dim, "a dimension") for dim in shape_value)
    count = math.prod(shape)
    if count > max_elements:
        raise ProtocolError(f"array of {count} elements exceeds the limit of {max_elements}")
    dtype = np.dtype(dtype_name).newbyteorder("<")
    offset = _expect_int(spec.get("offset"), "offset")
    nbytes = _expect_int(spec.get("nbytes"), "nbytes")
    if nbytes != count * dtype.itemsize or offset + nbytes > len(data):
        raise ProtocolError("array bytes do not match its dtype and shape")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return flat.astype(dtype.newbyteorder("="), copy=True).reshape(shape)
