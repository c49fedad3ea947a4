"""The framed channel between the grading process and a child (both sides).

Every message is one frame::

    b"JJF1" | kind: u8 | 3 zero bytes | meta length: u32 LE | data length: u64 LE | meta | data

``meta`` is a small UTF-8 JSON object; ``data`` is raw bytes (array buffers,
little-endian). Nothing is ever pickled. Arrays travel as a whitelisted dtype
name, a bounded shape and an offset into ``data``; the receiver rebuilds them
from bytes with ``numpy.frombuffer`` and so never runs code the sender chose.

Metadata is parsed strictly: only finite numbers, integers of at most 19
digits, nesting at most ``MAX_META_DEPTH`` deep. Anything else is a
``ProtocolError``, which the parent turns into the submission's failure. Text is
made valid UTF-8 here, at the boundary: JSON can carry a lone surrogate
(``"\\ud800"``) that no strict decoder reads back, and every string of a stored
report must read back.

A job travels in two phases (see ``JobMessage``): the JOB frame carries the
solutions and the *first* cases (a learner's samples); the hidden cases follow
in a HIDDEN_CASES frame only after the child has reported every first case and
sent SAMPLES_DONE. So whatever the child said about a sample was said before
any hidden input existed in its memory.

This module imports only the standard library and numpy, because the child
loads it inside the sandbox before any learner code runs. It is longer than most
on purpose: the frame format, the array encoding and the job message are the
one contract both sides must agree on byte for byte, and it is one of the few
files the sandbox mounts (the grader/child/ package).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, BinaryIO

import numpy as np

MAGIC = b"JJF1"
_HEADER = struct.Struct("<4sB3xIQ")
HEADER_SIZE = _HEADER.size

MAX_META_BYTES = 256 * 1024
MAX_META_DEPTH = 8
MAX_INT_DIGITS = 19
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


# The child's argv flag for a job whose code names neither flax nor optax: it imports
# jax alone (0.45 s of CPU less); otherwise the libraries are imported before the job,
# so that a learner's own imports of them cost nothing on the job's clock.
JAX_ONLY = "--jax-only"
LIBRARIES = ("flax", "optax")


def names_the_libraries(sources: Sequence[str]) -> bool:
    """Whether any of ``sources`` names flax or optax (an import, or any mention)."""
    return any(library in source for source in sources for library in LIBRARIES)


class Kind(IntEnum):
    JOB = 1  # parent -> child: what to run, with the first cases
    HELLO = 2  # child -> parent: runtime is imported and ready
    SOLUTION_ERROR = 3  # child -> parent: a solution failed before its cases ran
    CASE_RESULT = 4  # child -> parent: one case's outputs
    CASE_ERROR = 5  # child -> parent: one case raised
    DONE = 6  # child -> parent: all solutions finished
    SAMPLES_DONE = 7  # child -> parent: every first case reported; send the hidden ones
    HIDDEN_CASES = 8  # parent -> child: the hidden cases' inputs
    ANALYSIS = 9  # child -> parent: one compiled program's primitives and temporary bytes
    # An untrusted author's cases.py (grader/child/author_cases.py, grader/author_code.py):
    AUTHOR_CASES = 10  # parent -> child: cases.py's source, how many variants, what else to run
    GENERATED = 11  # child -> parent: the cases of one seed (or the memory probes)
    REGIMES = 12  # child -> parent: which hidden cases each regime holds, per variant
    AUTHOR_ERROR = 13  # child -> parent: cases.py failed (where, why, which line)
    # An author's tests.py (grader/child/author_tests.py, grader/author_tests.py):
    AUTHOR_TESTS = 14  # parent -> child: tests.py's source, the seeds, (phase 3) the outputs
    TEST_CALLS = 15  # child -> parent: each test's declaration and its one round of calls
    TEST_RESULTS = 16  # child -> parent: each test's passed/failed and its first line


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


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf without any NaN/Infinity token
        raise ProtocolError(f"non-finite number {text[:40]} in frame metadata")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ProtocolError("an integer in frame metadata has too many digits")
    return int(text)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of parsed JSON, giving up (returning limit + 1) past the limit."""
    if limit < 0:
        return 1
    if isinstance(value, dict):
        return 1 + max((_depth(item, limit - 1) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item, limit - 1) for item in value), default=0)
    return 0


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: encodable as UTF-8."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _valid_strings(value: Any) -> Any:
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(key): _valid_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_valid_strings(item) for item in value]
    return value


def parse_meta(meta_bytes: bytes) -> dict[str, Any]:
    """Strict JSON for frame metadata: an object, finite numbers, bounded depth, every
    string valid UTF-8."""
    try:
        meta = json.loads(
            meta_bytes.decode(),
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProtocolError(f"frame metadata is not JSON: {error}") from None
    except RecursionError:
        raise ProtocolError("frame metadata is nested too deeply") from None
    if not isinstance(meta, dict):
        raise ProtocolError("frame metadata is not a JSON object")
    if _depth(meta, MAX_META_DEPTH) > MAX_META_DEPTH:
        raise ProtocolError(f"frame metadata is nested more than {MAX_META_DEPTH} levels deep")
    return dict(_valid_strings(meta))


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
    return Frame(kind, parse_meta(meta_bytes), data)


def array_spec(array: np.ndarray[Any, Any], offset: int) -> dict[str, Any]:
    return {
        "dtype": array.dtype.name,
        "shape": list(array.shape),
        "offset": offset,
        "nbytes": array.nbytes,
    }


def pack_arrays(
    arrays: list[np.ndarray[Any, Any]], offset: int = 0
) -> tuple[list[dict[str, Any]], bytes]:
    """Lay arrays end to end (little-endian, C order) from ``offset``; return their specs and the buffer."""
    specs: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    for array in arrays:
        if array.dtype.name not in WIRE_DTYPES:
            raise ValueError(f"dtype {array.dtype.name} cannot travel on the channel")
        little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        raw = little.tobytes()
        specs.append(array_spec(array, offset))
        chunks.append(raw)
        offset += len(raw)
    return specs, b"".join(chunks)


def oversized_dimensions(shape: tuple[int, ...], max_elements: int) -> bool:
    """Whether a shape's non-zero dimensions multiply past the element limit. An empty
    array may have any other dimensions (``(0, a, b)`` has no elements whatever ``a``
    and ``b``), so the element count alone would let two free numbers through."""
    return math.prod(dim for dim in shape if dim) > max_elements


def _expect_int(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ProtocolError(f"{what} must be a non-negative integer")
    return value


def unpack_array(spec: Any, data: bytes, *, max_elements: int) -> np.ndarray[Any, Any]:
    """Rebuild one array from its spec, validating every field against ``data``."""
    if not isinstance(spec, dict):
        raise ProtocolError("array spec is not an object")
    if set(spec) != {"dtype", "shape", "offset", "nbytes"}:
        raise ProtocolError("array spec has missing or unknown fields")
    dtype_name = spec.get("dtype")
    if dtype_name not in WIRE_DTYPES:
        raise ProtocolError(f"dtype {dtype_name!r} is not allowed on the channel")
    shape_value = spec.get("shape")
    if not isinstance(shape_value, list) or len(shape_value) > MAX_NDIM:
        raise ProtocolError(f"shape must be a list of at most {MAX_NDIM} dimensions")
    shape = tuple(_expect_int(dim, "a dimension") for dim in shape_value)
    count = math.prod(shape)
    if oversized_dimensions(shape, max_elements):
        raise ProtocolError(f"an array's dimensions exceed the limit of {max_elements} elements")
    dtype = np.dtype(dtype_name).newbyteorder("<")
    offset = _expect_int(spec.get("offset"), "offset")
    nbytes = _expect_int(spec.get("nbytes"), "nbytes")
    if nbytes != count * dtype.itemsize or offset + nbytes > len(data):
        raise ProtocolError("array bytes do not match its dtype and shape")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return flat.astype(dtype.newbyteorder("="), copy=True).reshape(shape)


# Case inputs: each argument a Python float, an array, or a dict of str -> (array | dict).
Argument = float | np.ndarray[Any, Any] | dict[str, Any]
MAX_TREE_DEPTH = 8
# Limits the child keeps to and the parent enforces (grader/child/run.py, grader/running/frames.py).
MAX_TREE_LEAVES = 256  # leaves of one pytree output
MAX_TREE_PATH_CHARS = 300  # a leaf's path
MAX_PRIMITIVES = 2000  # primitive names in an ANALYSIS frame, nested ones (outer>inner) included
MAX_PRIMITIVE_CHARS = 100  # one such name
MAX_PRIMITIVE_COUNT = 1 << 40  # how often one occurs
MAX_PROGRAMS = 256  # programs one solution compiles (one per shape group of its cases)


def _tree_leaves(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, np.ndarray[Any, Any]]]:
    leaves: list[tuple[str, np.ndarray[Any, Any]]] = []
    for key, item in tree.items():
        path = f"{prefix}{key}"
        leaves += _tree_leaves(item, path + "/") if isinstance(item, dict) else [(path, item)]
    return leaves


def _encode_argument(
    value: Argument, offset: int, chunks: list[bytes]
) -> tuple[dict[str, Any], int]:
    """One argument's metadata. A tree travels flat, its leaves by path ("dense_0/w";
    keys hold no "/", grader/cases.py), so that metadata stays shallow however deep it is."""
    if isinstance(value, float):
        return {"kind": "float", "value": value}, offset
    if isinstance(value, dict):
        paths, arrays = zip(*_tree_leaves(value), strict=True)
        specs, raw = pack_arrays(list(arrays), offset)
        chunks.append(raw)
        return {"kind": "tree", "paths": list(paths), "specs": specs}, offset + len(raw)
    specs, raw = pack_arrays([value], offset)
    chunks.append(raw)
    return {"kind": "array", "spec": specs[0]}, offset + len(raw)


def pack_cases(cases: list[list[Argument]], offset: int = 0) -> tuple[list[dict[str, Any]], bytes]:
    """Case inputs as metadata plus one buffer starting at ``offset`` of the frame's data."""
    meta: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    for args in cases:
        encoded: list[dict[str, Any]] = []
        for value in args:
            item, offset = _encode_argument(value, offset, chunks)
            encoded.append(item)
        meta.append({"args": encoded})
    return meta, b"".join(chunks)


def _decode_argument(arg: dict[str, Any], data: bytes, max_elements: int) -> Argument:
    if arg["kind"] == "float":
        return float(arg["value"])
    if arg["kind"] == "tree":
        tree: dict[str, Any] = {}
        for path, spec in zip(arg["paths"], arg["specs"], strict=True):
            *parents, leaf = str(path).split("/")
            if len(parents) >= MAX_TREE_DEPTH:
                raise ProtocolError("an argument's tree nests too deep")
            node = tree
            for key in parents:
                node = node.setdefault(key, {})
            node[leaf] = unpack_array(spec, data, max_elements=max_elements)
        return tree
    return unpack_array(arg["spec"], data, max_elements=max_elements)


def unpack_cases(
    meta: list[dict[str, Any]], data: bytes, *, max_elements: int
) -> list[list[Argument]]:
    return [[_decode_argument(arg, data, max_elements) for arg in case["args"]] for case in meta]


@dataclass(frozen=True)
class SourceRef:
    """Where one solution's UTF-8 source lies in the JOB frame's data."""

    filename: str
    offset: int
    length: int


@dataclass(frozen=True)
class PartSpec:
    """One function a job calls (a part of a problem with [[parts]]): its name in the
    solution, how many outputs it returns and which of them are pytrees."""

    entry_point: str
    n_outputs: int
    tree_outputs: tuple[int, ...] = ()


@dataclass(frozen=True)
class JobMessage:
    """The JOB frame's metadata (parent -> child), typed on both sides.

    ``hidden_cases``: how many cases a HIDDEN_CASES frame will bring after
    SAMPLES_DONE (0: none, the child finishes after the first cases).
    ``address_space_bytes``: an RLIMIT_AS to set before learner code runs, only
    where no cgroup bounds the sandbox's memory (None: leave it alone).
    ``compiled``: call solutions whole under ``jax.jit`` where they trace (a
    learner's job: a few cases, one compile each); otherwise op by op (a trusted
    run: hundreds of cases whose compiled primitives are reused across variants).
    ``tree_outputs``: the outputs (by position) returned as pytrees, flattened with
    paths (grader/judging/trees.py); on the wire ``{"tree": [{"path", "leaf" | "invalid"}]}``.
    ``analysed``: every case says which program answered it, and each program is
    described in one ANALYSIS frame before the first case it answers: its primitives
    after dead-code elimination, with counts, and its executable's temporary bytes
    (grader/judging/requirements.py). ``compile_first``: that many leading cases are compiled
    even when ``compiled`` is off (a trusted run analyses its samples and probes).
    ``parts``: the functions of a problem with several; each case's ``part`` (an index,
    0 by default) says which it calls. Empty: the one of ``entry_point``."""

    entry_point: str
    n_outputs: int
    max_elements: int
    max_input_elements: int
    cpu_seconds: int
    address_space_bytes: int | None
    solutions: tuple[SourceRef, ...]
    cases: tuple[dict[str, Any], ...]
    hidden_cases: int = 0
    compiled: bool = False
    tree_outputs: tuple[int, ...] = ()
    analysed: bool = False
    compile_first: int = 0
    parts: tuple[PartSpec, ...] = ()

    @property
    def part_specs(self) -> tuple[PartSpec, ...]:
        return self.parts or (PartSpec(self.entry_point, self.n_outputs, self.tree_outputs),)

    def to_meta(self) -> dict[str, Any]:
        return {
            "entry_point": self.entry_point,
            "n_outputs": self.n_outputs,
            "max_elements": self.max_elements,
            "max_input_elements": self.max_input_elements,
            "cpu_seconds": self.cpu_seconds,
            "address_space_bytes": self.address_space_bytes,
            "solutions": [vars(ref) for ref in self.solutions],
            "cases": list(self.cases),
            "hidden_cases": self.hidden_cases,
            "compiled": self.compiled,
            "tree_outputs": list(self.tree_outputs),
            "analysed": self.analysed,
            "compile_first": self.compile_first,
            "parts": [
                {
                    "entry_point": p.entry_point,
                    "n_outputs": p.n_outputs,
                    "tree_outputs": list(p.tree_outputs),
                }
                for p in self.parts
            ],
        }

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> JobMessage:
        return cls(
            entry_point=str(meta["entry_point"]),
            n_outputs=int(meta["n_outputs"]),
            max_elements=int(meta["max_elements"]),
            max_input_elements=int(meta["max_input_elements"]),
            cpu_seconds=int(meta["cpu_seconds"]),
            address_space_bytes=meta["address_space_bytes"],
            solutions=tuple(SourceRef(**ref) for ref in meta["solutions"]),
            cases=tuple(meta["cases"]),
            hidden_cases=int(meta["hidden_cases"]),
            compiled=meta.get("compiled") is True,
            tree_outputs=tuple(int(i) for i in meta.get("tree_outputs", ())),
            analysed=meta.get("analysed") is True,
            compile_first=int(meta.get("compile_first", 0)),
            parts=tuple(
                PartSpec(
                    str(part["entry_point"]),
                    int(part["n_outputs"]),
                    tuple(int(i) for i in part["tree_outputs"]),
                )
                for part in meta.get("parts", ())
            ),
        )
