"""The code that runs learner solutions, in a child process the grader owns.

Started as ``python -I -u -m grader.child RESULT_FD`` (or, in a sandbox, through a
bootstrap that puts /judge on sys.path). It imports the runtime,
sends HELLO on the result channel, then reads one JOB frame from stdin: the
entry point, one or more solutions' sources, and the first cases' inputs. For
each solution it compiles and executes the source, calls the entry point once
per case, converts what comes back to plain numpy arrays *here*, inside the
time limit, and sends one frame per case. A learner's job then has a second
phase: the child says SAMPLES_DONE and only then receives the hidden cases
(see grader/child/protocol.py for why). From the job on, Python's stdout and stderr
both go to fd 1, the learner's output (read by the parent with a byte cap);
fd 2 keeps what the runtime's native code logs (XLA, CUDA), which the parent
sends to the operator's log, never to the learner.

Nothing in this process ever holds expected outputs or the reference (unless
the job is a trusted run of the reference itself), so there is nothing to
peek at. Its frames are data, never verdicts: the parent decides.

The job loop and what it needs of its own (tracebacks, conversion, compiling by
shape group, the cases); what both sides share is grader/child/protocol.py and
grader/child/verdicts.py, the warm-up grader/child/warmup.py. The sandbox mounts this
package and nothing else of the project: tests/grader/child/test_package.py holds its
imports to itself, the standard library and the runtime.
"""

from __future__ import annotations

import builtins
import contextlib
import linecache
import os
import resource
import select
import sys
import time
import traceback
import types
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from grader.child import protocol
from grader.child.protocol import JobMessage, Kind
from grader.child.verdicts import Verdict

MAX_MESSAGE_CHARS = 8000
MAX_TRACEBACK_FRAMES = 30


def _import_runtime(*, libraries: bool) -> Any:
    """jax, and with ``libraries`` flax and optax too (protocol.JAX_ONLY says when not):
    imported ahead of the job, so that a learner's imports of them are instant."""
    import jax
    import jax.numpy as jnp  # noqa: F401

    if libraries:
        import flax  # noqa: F401
        import optax  # noqa: F401
        from flax import nnx  # noqa: F401
        from flax.training import train_state  # noqa: F401

    _TOOLS.update(_analysis_tools(jax))
    return jax


# What programs are compiled and analysed with, taken before any learner code runs:
# a module that replaces ``jax.jit`` or ``Compiled.memory_analysis`` afterwards
# changes its own view of them, not ours (docs/security.md says what remains).
_TOOLS: dict[str, Any] = {}


def _analysis_tools(jax: Any) -> dict[str, Any]:
    from jax._src.interpreters import partial_eval

    return {
        "jit": jax.jit,
        "memory_analysis": jax.stages.Compiled.memory_analysis,
        "dce": partial_eval.dce_jaxpr,
        "block": jax.block_until_ready,
        "flatten": jax.tree_util.tree_flatten,
        # What tracing raises where Python code needs a traced argument's value.
        "concretization": (
            jax.errors.ConcretizationTypeError,
            jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError,
        ),
    }


class _Channel:
    def __init__(self, fd: int) -> None:
        self._stream: BinaryIO = os.fdopen(fd, "wb", buffering=0)

    def send(self, kind: Kind, meta: dict[str, Any], data: bytes = b"") -> None:
        self._stream.write(protocol.encode_frame(kind, meta, data))


def _safe_str(value: object) -> str:
    try:
        return str(value)[:MAX_MESSAGE_CHARS]
    except BaseException:  # a hostile __str__ must not take the child down
        return "(the message could not be rendered)"


def _formatted_exception(error: BaseException) -> str:
    try:
        return "".join(traceback.format_exception_only(type(error), error))
    except BaseException:
        return f"{type(error).__name__}: (the message could not be rendered)\n"


def learner_traceback(error: BaseException, filename: str) -> str:
    """The traceback cut down to the learner's own frames, the last few only:
    a runaway recursion has a million of them, and formatting them all would
    take longer than the time limit."""
    recent: deque[tuple[str, int]] = deque(maxlen=MAX_TRACEBACK_FRAMES)
    seen = 0
    tb = error.__traceback__
    while tb is not None:  # a plain loop: cheap even for a million frames
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            recent.append((code.co_name, tb.tb_lineno))
            seen += 1
        tb = tb.tb_next
    lines = ["Traceback (your code only):\n"]
    if seen > len(recent):
        lines.append(f"  ... {seen - len(recent)} earlier frames omitted ...\n")
    frames = [traceback.FrameSummary(filename, lineno, name) for name, lineno in recent]
    lines += traceback.StackSummary.from_list(frames).format()
    lines.append(_formatted_exception(error))
    return "".join(lines)[:MAX_MESSAGE_CHARS]


def _error_verdict(error: BaseException) -> Verdict:
    if isinstance(error, MemoryError):
        return Verdict.MEMORY_LIMIT_EXCEEDED
    if "RESOURCE_EXHAUSTED" in _safe_str(error) and "memory" in _safe_str(error).lower():
        return Verdict.MEMORY_LIMIT_EXCEEDED
    return Verdict.RUNTIME_ERROR


def _exception_name(error: BaseException) -> str:
    """The exception's class name: all a hidden case may reveal of an error."""
    try:
        return str(type(error).__name__)[:100]
    except BaseException:
        return "Exception"


def _describe_exit(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return "the code called sys.exit(); a solution must return its result\n"
    if isinstance(error, KeyboardInterrupt):
        return "the code raised KeyboardInterrupt\n"
    return ""


@dataclass(frozen=True)
class Converted:
    """One returned value as the wire carries it: an array, or why it cannot be one
    (``refusal`` is the verdict that reason stands for)."""

    array: np.ndarray[Any, Any] | None
    message: str = ""
    refusal: Verdict | None = None


def to_array(value: Any, max_elements: int, jax: Any) -> Converted:
    """Convert one returned value to a plain ndarray, or explain why it cannot be."""
    if value is None:
        return Converted(
            None,
            "the function returned None; did you forget a return statement?",
            Verdict.WRONG_ANSWER,
        )
    try:
        array = np.array(jax.device_get(value), copy=True)
    except BaseException as error:
        message = f"the returned {type(value).__name__} could not be converted to an array: {_safe_str(error)}"
        return Converted(None, message, Verdict.WRONG_ANSWER)
    array = array.view(np.ndarray) if type(array) is not np.ndarray else array
    if protocol.oversized_dimensions(array.shape, max_elements):
        message = f"too large: shape {array.shape} (at most {max_elements} elements, counting the non-zero dimensions of an empty array)"
        return Converted(None, message, Verdict.OUTPUT_LIMIT_EXCEEDED)
    if array.dtype.name not in protocol.WIRE_DTYPES:
        if np.issubdtype(array.dtype, np.floating) or jax.numpy.issubdtype(
            array.dtype, jax.numpy.floating
        ):
            array = array.astype(np.float32)  # bfloat16 and friends
        else:
            message = f"the function returned a {type(value).__name__} of dtype {array.dtype}, not a numeric array"
            return Converted(None, message, Verdict.WRONG_ANSWER)
    return Converted(array)


def _key_name(entry: Any) -> str:
    """One step of a pytree path as text: a dict key, a list index, a field name."""
    for attribute in ("key", "idx", "name"):
        if hasattr(entry, attribute):
            return _safe_str(getattr(entry, attribute))[:100]
    return _safe_str(entry)[:100]


def _plain_tree(value: Any, jax: Any) -> Any:
    """NNX states and variables as plain dicts and arrays, so that ``nnx.state(model)``
    and the same parameters as a dict are one answer (a State's leaves would
    otherwise end in ``.value``)."""
    from flax import nnx

    def plain(node: Any) -> Any:
        if isinstance(node, nnx.State):
            return nnx.to_pure_dict(node)
        return node.get_value() if isinstance(node, nnx.Variable) else node

    return jax.tree_util.tree_map(
        plain, value, is_leaf=lambda node: isinstance(node, nnx.State | nnx.Variable)
    )


def tree_leaves(value: Any, max_elements: int, jax: Any) -> list[tuple[str, Converted]]:
    """A pytree output's leaves, each named by its path (``dense_0/kernel``; the
    parent puts the output's name in front) and converted like any output."""
    flat, _treedef = jax.tree_util.tree_flatten_with_path(_plain_tree(value, jax))
    if len(flat) > protocol.MAX_TREE_LEAVES:
        raise ValueError(
            f"the returned tree has {len(flat)} leaves; at most {protocol.MAX_TREE_LEAVES} are allowed"
        )
    return [
        (
            "/".join(_key_name(entry) for entry in path)[: protocol.MAX_TREE_PATH_CHARS],
            to_array(leaf, max_elements, jax),
        )
        for path, leaf in flat
    ]


# Code that prints (or stops for input) runs op by op: under jax.jit a print shows
# tracers once, not values per case, and a learner debugging with print must see values.
EAGER_NAMES = frozenset({"print", "breakpoint", "input", "pdb"})


def _uses_any(code: types.CodeType, names: frozenset[str]) -> bool:
    """Whether ``code`` or any function or class inside it names one of ``names``."""
    pending = [code]
    while pending:
        current = pending.pop()
        if names.intersection(current.co_names):
            return True
        pending += [const for const in current.co_consts if isinstance(const, types.CodeType)]
    return False


def static_argnums(args: Sequence[Any]) -> tuple[int, ...]:
    """The arguments a compiled call takes as constants: integral-valued floats (a seed,
    a count), which Python code may need as ints. Cases that share their shapes and
    these values share one compilation."""
    return tuple(i for i, arg in enumerate(args) if isinstance(arg, float) and arg.is_integer())


def scalar_argnums(args: Sequence[Any]) -> tuple[int, ...]:
    """Every Python number among the arguments: static where the code needs the values
    of its scalars while it is traced (``if rate <= 0``, a schedule that checks its
    arguments). A program per distinct value, each one what running op by op does."""
    return tuple(i for i, arg in enumerate(args) if isinstance(arg, float | int))


def _signature(args: Sequence[Any], static: tuple[int, ...]) -> Any:
    """What one compiled program serves: the static values, the tree structure and
    each dynamic leaf's shape and dtype (a Python float traces as a weak scalar)."""
    dynamic = [arg for i, arg in enumerate(args) if i not in static]
    leaves, treedef = _TOOLS["flatten"](dynamic)
    shapes = tuple(
        (tuple(np.shape(leaf)), str(getattr(leaf, "dtype", type(leaf).__name__))) for leaf in leaves
    )
    return static, tuple(args[i] for i in static), treedef, shapes


@dataclass
class _Program:
    """One program a solution answers cases with: the executable of one trace (what
    was analysed is what runs), or ``executable`` None: op by op."""

    index: int
    executable: Any = None
    static: tuple[int, ...] = ()


@dataclass
class _Numbers:
    """How many programs a solution has numbered so far, over all its parts."""

    count: int = 0


@dataclass
class _Loaded:
    """A solution's entry point and how it is called.

    ``compiled``: call it as a compiled program, integral float arguments static (a
    seed, a count: Python code may branch on them), everything else traced, so that a
    case costs one compilation instead of one per primitive; cases that share shapes
    and static values share it. Each program is traced once, its jaxpr read, and the
    executable of that very trace answers every case of its shape group
    (``jit(f).trace(...).lower().compile()``): what is analysed is what answers. Code
    that needs a traced scalar's value (``if decay_rate <= 0`` in a schedule) is traced
    again with every Python number static, a program per distinct value, each what
    running op by op would do (``scalars_static``). The
    first time compiling or running fails for any reason (Python code that needs
    concrete values, a non-array result, an error), the solution runs eagerly from
    then on, that case included, and what happens eagerly is its result. With
    ``job.analysed`` each program is announced in an ANALYSIS frame (the eager one
    with why it could not be compiled).
    """

    index: int
    filename: str
    function: Any
    compiled: bool = True
    # Every Python number static (``scalar_argnums``): the code could not be traced with
    # its non-integral scalars as arguments.
    scalars_static: bool = False
    programs: dict[Any, _Program] = field(default_factory=dict)
    eager: _Program | None = None
    # Programs numbered so far, shared by the solution's parts (one numbering per solution).
    numbers: _Numbers = field(default_factory=_Numbers)

    def _number(self) -> int:
        if self.numbers.count >= protocol.MAX_PROGRAMS:
            raise RuntimeError(f"a solution may compile at most {protocol.MAX_PROGRAMS} programs")
        self.numbers.count += 1
        return self.numbers.count - 1

    def _program_for(self, args: list[Any], job: JobMessage, channel: _Channel) -> _Program:
        static = scalar_argnums(args) if self.scalars_static else static_argnums(args)
        key = _signature(args, static)
        program = self.programs.get(key)
        if program is None:
            traced = _TOOLS["jit"](self.function, static_argnums=static).trace(*args)
            executable = traced.lower().compile()
            program = _Program(self._number(), executable, static)
            if job.analysed:
                _announce(channel, self.index, program.index, traced.jaxpr, executable)
            self.programs[key] = program
        return program

    def _eager_program(
        self, error: BaseException | None, job: JobMessage, channel: _Channel
    ) -> int:
        if self.eager is None:
            self.eager = _Program(self._number())
            if job.analysed:
                why = "" if error is None else _formatted_exception(error)
                meta = {"primitives": None, "temp_bytes": None, "error": why[:MAX_ANALYSIS_ERROR]}
                channel.send(
                    Kind.ANALYSIS, {"solution": self.index, "program": self.eager.index, **meta}
                )
        return self.eager.index

    def _scalars_needed(self, failure: Exception, args: list[Any]) -> bool:
        """Whether ``failure`` is the code needing the value of a traced scalar that a
        compile with every scalar static would give it (the first time only)."""
        return (
            not self.scalars_static
            and isinstance(failure, _TOOLS["concretization"])
            and scalar_argnums(args) != static_argnums(args)
        )

    def call(
        self, args: list[Any], job: JobMessage, channel: _Channel, *, compile_it: bool
    ) -> tuple[Any, int]:
        """The entry point's value for ``args``, and the number of the program that
        computed it."""
        error: BaseException | None = None
        while self.compiled and compile_it:
            try:
                program = self._program_for(args, job, channel)
                dynamic = [arg for i, arg in enumerate(args) if i not in program.static]
                return _TOOLS["block"](program.executable(*dynamic)), program.index
            except Exception as failure:
                if self._scalars_needed(failure, args):
                    self.scalars_static = True  # and compile again, every scalar static
                    continue
                self.compiled, error = False, failure
        number = self._eager_program(error, job, channel)
        return self.function(*args), number


MAX_ANALYSIS_ERROR = 2000


def _dead_code_removed(closed_jaxpr: Any) -> Any:
    """The jaxpr without the equations whose results are never used: a ``lax.scan``
    beside the loop that really computes the answer is not a scan that computes it."""
    jaxpr = closed_jaxpr.jaxpr
    try:
        pruned, _used_inputs = _TOOLS["dce"](jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
        return pruned
    except Exception:  # a primitive without a rule for it: read the jaxpr whole
        return jaxpr


def primitive_counts(jaxpr: Any) -> dict[str, int]:
    """How often each primitive occurs in a jaxpr, nested ones included (a scan's body,
    a jit's inner jaxpr, a cond's branches), and for each nested one also
    ``outer>inner`` for every distinct primitive it is nested in (``scan>psum``: a
    psum inside a scan's body, at any depth). Equations in the program, not executions."""
    counts: dict[str, int] = {}
    pending: list[tuple[Any, tuple[str, ...]]] = [(jaxpr, ())]
    while pending:
        current, outer = pending.pop()
        for equation in current.eqns:
            name = str(equation.primitive.name)[:50]
            for key in (name, *(f"{o}>{name}"[: protocol.MAX_PRIMITIVE_CHARS] for o in outer)):
                counts[key] = counts.get(key, 0) + 1
            inside = (*outer, name) if name not in outer else outer
            for param in equation.params.values():
                for item in param if isinstance(param, tuple | list) else (param,):
                    if hasattr(item, "jaxpr") and hasattr(item, "consts"):  # ClosedJaxpr
                        pending.append((item.jaxpr, inside))
                    elif hasattr(item, "eqns"):  # Jaxpr
                        pending.append((item, inside))
    return counts


def _announce(channel: _Channel, solution: int, program: int, jaxpr: Any, executable: Any) -> None:
    """One ANALYSIS frame: what the program is made of, and its temporary memory."""
    counts = primitive_counts(_dead_code_removed(jaxpr))
    names = sorted(counts)[: protocol.MAX_PRIMITIVES]
    try:
        analysis = _TOOLS["memory_analysis"](executable)
        temp = None if analysis is None else int(analysis.temp_size_in_bytes)
    except Exception:  # a backend without memory analysis: not measured
        temp = None
    channel.send(
        Kind.ANALYSIS,
        {
            "solution": solution,
            "program": program,
            "primitives": [[n, min(counts[n], protocol.MAX_PRIMITIVE_COUNT)] for n in names],
            "temp_bytes": temp if temp is not None and 0 <= temp < 1 << 50 else None,
            "error": "",
        },
    )


def _run_case(
    channel: _Channel,
    solution: _Loaded,
    case_index: int,
    args: list[Any],
    job: JobMessage,
    jax: Any,
    part: protocol.PartSpec,
) -> None:
    where: dict[str, Any] = {"solution": solution.index, "case": case_index, "program": None}
    started = time.perf_counter()
    compile_it = job.compiled or case_index < job.compile_first
    try:
        value, program = solution.call(args, job, channel, compile_it=compile_it)
        if job.analysed:
            where["program"] = program
        values = [value] if part.n_outputs == 1 else value
        if part.n_outputs > 1 and (
            not isinstance(values, tuple | list) or len(values) != part.n_outputs
        ):
            raise TypeError(f"expected a tuple of {part.n_outputs} outputs")
        converted: list[Converted | list[tuple[str, Converted]]] = [
            tree_leaves(item, job.max_elements, jax)
            if index in part.tree_outputs
            else to_array(item, job.max_elements, jax)
            for index, item in enumerate(values)
        ]
    except BaseException as error:
        if job.analysed and where["program"] is None and solution.eager is not None:
            where["program"] = solution.eager.index  # it raised running op by op
        message = _describe_exit(error) + learner_traceback(error, solution.filename)
        channel.send(
            Kind.CASE_ERROR,
            {
                **where,
                "seconds": time.perf_counter() - started,
                "verdict": _error_verdict(error).value,
                "exception": _exception_name(error),
                "message": message,
            },
        )
        return
    seconds = time.perf_counter() - started
    every = [c for item in converted for c in (item if isinstance(item, list) else [("", item)])]
    too_large = [c.message for _, c in every if c.refusal is Verdict.OUTPUT_LIMIT_EXCEEDED]
    if too_large:
        channel.send(
            Kind.CASE_ERROR,
            {
                **where,
                "seconds": seconds,
                "verdict": Verdict.OUTPUT_LIMIT_EXCEEDED.value,
                "exception": "",
                "message": "The output is " + too_large[0],
            },
        )
        return
    arrays = [c.array for _, c in every if c.array is not None]
    specs, data = protocol.pack_arrays(arrays)
    spec_iter = iter(specs)

    def wire(conversion: Converted) -> dict[str, Any]:
        return next(spec_iter) if conversion.array is not None else {"invalid": conversion.message}

    outputs: list[dict[str, Any]] = []
    for item in converted:
        if isinstance(item, list):
            outputs.append({"tree": [{"path": path, "leaf": wire(leaf)} for path, leaf in item]})
        else:
            outputs.append(wire(item))
    channel.send(Kind.CASE_RESULT, {**where, "seconds": seconds, "outputs": outputs}, data)


def _solution_error(
    channel: _Channel, index: int, verdict: Verdict, message: str, exception: str = ""
) -> None:
    channel.send(
        Kind.SOLUTION_ERROR,
        {"solution": index, "verdict": verdict.value, "exception": exception, "message": message},
    )


# One solution's functions, by part index: each loaded, or why it is missing (a part
# whose entry point the solution does not define; its cases answer that).
_Parts = dict[int, _Loaded | str]


def _load_solution(
    channel: _Channel, index: int, filename: str, source: str, job: JobMessage
) -> _Parts | None:
    """Compile and execute one solution; its entry points, or None after reporting why
    not (no entry point at all is the solution's error; some missing, those parts')."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        detail = "".join(traceback.format_exception_only(type(error), error))
        _solution_error(channel, index, Verdict.SYNTAX_ERROR, detail[:MAX_MESSAGE_CHARS])
        return None
    namespace: dict[str, Any] = {
        "__name__": "submission",
        "__builtins__": builtins,
        "__file__": filename,
    }
    try:
        exec(code, namespace)
    except BaseException as error:
        message = (
            "While loading your code:\n"
            + _describe_exit(error)
            + learner_traceback(error, filename)
        )
        _solution_error(channel, index, _error_verdict(error), message, _exception_name(error))
        return None
    parts: _Parts = {}
    numbers = _Numbers()
    eager_names = _uses_any(code, EAGER_NAMES)
    for number, part in enumerate(job.part_specs):
        function = namespace.get(part.entry_point)
        if callable(function):
            parts[number] = _Loaded(
                index, filename, function, compiled=not eager_names, numbers=numbers
            )
        else:
            found = (
                "is not a function"
                if part.entry_point in namespace
                else "was not found at the top level"
            )
            parts[number] = f"`{part.entry_point}` {found} of your code."
    if all(isinstance(loaded, str) for loaded in parts.values()):
        _solution_error(channel, index, Verdict.MISSING_ENTRY_POINT, str(parts[0]))
        return None
    return parts


def _run_part_case(
    channel: _Channel,
    parts: _Parts,
    case_index: int,
    args: list[Any],
    part_index: int,
    job: JobMessage,
    jax: Any,
) -> None:
    """One case, by the function of its part; a part the solution lacks answers with
    its own missing entry point, and the other parts still run."""
    loaded = parts.get(part_index)
    if isinstance(loaded, _Loaded):
        _run_case(channel, loaded, case_index, args, job, jax, job.part_specs[part_index])
        return
    channel.send(
        Kind.CASE_ERROR,
        {
            "solution": next(p for p in parts.values() if isinstance(p, _Loaded)).index,
            "case": case_index,
            "program": None,
            "seconds": 0.0,
            "verdict": Verdict.MISSING_ENTRY_POINT.value,
            "exception": "",
            "message": loaded or "this part's function is not defined",
        },
    )


def _compiles(solution: _Loaded, job: JobMessage) -> bool:
    """Whether a solution's cases run as compiled programs. Where requirements are
    checked (``analysed``) always, since they are read from the program that answers:
    there even code that prints runs compiled (print shows tracers, jax.debug.print
    values). Otherwise when the job asks, or for its first ``compile_first`` cases."""
    if job.analysed:
        return True
    return solution.compiled and (job.compiled or job.compile_first > 0)


def _lower(kind: int, limit: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(kind, (limit, limit))


def _apply_job_limits(job: JobMessage) -> None:
    """Lower the limits to this job's before any learner code runs.

    A warm child is started under the pool's ceilings; lowering a limit is
    always allowed and can never be undone by the code that runs afterwards.
    Memory is normally bounded by the sandbox's cgroup (set by the parent);
    an address-space limit comes only where there is no cgroup. CPU time is
    cumulative, so the job's budget starts from what imports have used."""
    if job.address_space_bytes is not None:
        _lower(resource.RLIMIT_AS, job.address_space_bytes)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _lower(resource.RLIMIT_CPU, int(usage.ru_utime + usage.ru_stime) + job.cpu_seconds)


def _detach_stdin(stdin: BinaryIO) -> None:
    """Close the job's pipe but keep fd 0 valid: XLA's GPU compiler starts
    ptxas as a subprocess and fails when fd 0 is closed."""
    stdin.close()
    null = os.open(os.devnull, os.O_RDONLY)
    if null != 0:
        os.dup2(null, 0)
        os.close(null)


def _on_device(value: Any, jnp: Any) -> Any:
    """A case argument as the learner gets it: floats stay floats, arrays become
    ``jax.Array``s, trees keep their dicts."""
    if isinstance(value, float):
        return value
    if isinstance(value, dict):
        return {key: _on_device(item, jnp) for key, item in value.items()}
    return jnp.asarray(value)


def _decode(cases: Any, data: bytes, job: JobMessage, jnp: Any) -> list[tuple[list[Any], int]]:
    """Each case's arguments on the device, and the index of the part it calls."""
    decoded = protocol.unpack_cases(list(cases), data, max_elements=job.max_input_elements)
    parts = [int(case.get("part", 0)) for case in cases]
    return [
        ([_on_device(v, jnp) for v in args], part)
        for args, part in zip(decoded, parts, strict=True)
    ]


def _warm_up_until_a_job_arrives() -> None:
    """Exercise the libraries while idle (grader/child/warmup.py), one step at a time, and stop
    the moment the job is readable on stdin: under load a child takes work as soon as
    its imports are done and spends no CPU on warming; idle, it is fully warm."""
    from grader.child.warmup import steps

    for _ in steps():
        if select.select([0], [], [], 0)[0]:
            return


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


def main() -> None:
    channel = _Channel(int(sys.argv[1]))
    jax = _import_runtime(libraries=protocol.JAX_ONLY not in sys.argv[2:])
    channel.send(Kind.HELLO, {"backend": jax.default_backend(), "pid": os.getpid()})
    if "--warm-up" in sys.argv[2:]:
        _warm_up_until_a_job_arrives()
    stdin = os.fdopen(0, "rb", buffering=0)
    frame = protocol.read_frame(stdin, max_data_bytes=1 << 31)
    if frame is None or frame.kind is not Kind.JOB:
        raise SystemExit("no job received")
    job = JobMessage.from_meta(frame.meta)
    # The learner's tracebacks and warnings are the learner's output; native log lines
    # keep going to fd 2 (the operator's).
    sys.stderr = sys.stdout
    if not job.hidden_cases:
        _detach_stdin(stdin)
    _apply_job_limits(job)
    cases = _decode(job.cases, frame.data, job, jax.numpy)
    loaded: list[_Parts] = []
    for index, ref in enumerate(job.solutions):
        # utf-8-sig: a file saved with a byte-order mark is Python that runs, as it
        # would from disk.
        source = frame.data[ref.offset : ref.offset + ref.length].decode("utf-8-sig")
        solution = _load_solution(channel, index, ref.filename, source, job)
        if solution is None:
            continue
        for part in solution.values():
            if isinstance(part, _Loaded):
                part.compiled = _compiles(part, job)
        loaded.append(solution)
        for case_index, (args, part_index) in enumerate(cases):
            _run_part_case(channel, solution, case_index, args, part_index, job, jax)
    if job.hidden_cases and len(loaded) == 1 == len(job.solutions):
        # Everything printed so far belongs to the samples: push it out first.
        _flush()
        channel.send(Kind.SAMPLES_DONE, {})
        hidden = protocol.read_frame(stdin, max_data_bytes=1 << 31)
        _detach_stdin(stdin)
        if hidden is None or hidden.kind is not Kind.HIDDEN_CASES:
            raise SystemExit("no hidden cases received")
        for case_index, (args, part_index) in enumerate(
            _decode(hidden.meta["cases"], hidden.data, job, jax.numpy), start=len(cases)
        ):
            _run_part_case(channel, loaded[0], case_index, args, part_index, job, jax)
    _flush()
    channel.send(Kind.DONE, {})
    # Skip interpreter shutdown: atexit handlers and lingering threads of the
    # learner's code get no chance to write anything after DONE.
    os._exit(0)


if __name__ == "__main__":
    main()
