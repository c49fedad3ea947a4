"""The problem folder: its strict schema and its loader.

``problems/<slug>/`` holds ``problem.toml`` (validated here), ``statement.md``,
``starter.py``, ``hints.md``, ``solution.md``, ``cases.py`` and ``mistakes/*.py``;
the reference lives apart in ``reference_solutions/<slug>.py`` under the same root
(grader/problems/source.py joins the two).
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from grader.cases import (
    Case,
    CaseBank,
    Regime,
    RegimeAnswers,
    load_cases,
    load_regimes,
    regime_answers,
)
from grader.config import settings
from grader.errors import ProblemError
from grader.problems.quiz import Quiz, load_quiz
from grader.problems.schema_errors import (
    IDENTIFIER_PATTERN,
    SLUG_PATTERN,
    schema_error,
    toml_error,
)
from grader.problems.source import PROBLEMS, ProblemSource

SLUG = re.compile(SLUG_PATTERN)
IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
REQUIRED_TEXT_FILES = ("statement.md", "starter.py", "hints.md", "solution.md")


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float

    def describe(self) -> str:
        return f"rtol={self.rtol:g}, atol={self.atol:g}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceToleranceConfig(_Strict):
    rtol: float = Field(
        ge=0,
        le=1,
        description="Relative tolerance: |actual - expected| <= atol + rtol * |expected|.",
    )
    atol: float = Field(ge=0, description="Absolute tolerance, added to the relative part.")

    def as_tolerance(self) -> Tolerance:
        return Tolerance(rtol=self.rtol, atol=self.atol)


class ToleranceConfig(DeviceToleranceConfig):
    gpu: DeviceToleranceConfig | None = Field(
        None,
        description=(
            "The tolerance on a GPU where it must differ ([tolerance.gpu]): float32 sums in"
            " another order, transcendental functions of another library. `jaxjudge check"
            " --device gpu` proves it; a CPU check proves every mistake separated by it too."
        ),
    )

    def on(self, device: str) -> Tolerance:
        """The tolerance that holds on ``device``."""
        if device == "gpu" and self.gpu is not None:
            return self.gpu.as_tolerance()
        return self.as_tolerance()


class OutputConfig(_Strict):
    name: str = Field(pattern=IDENTIFIER.pattern, description="Short name used in verdicts.")
    description: str = Field(min_length=1, description="Shape and meaning, shown to learners.")
    tolerance: ToleranceConfig | None = Field(
        None, description="Overrides the problem's tolerance for this output."
    )
    tree: bool = Field(
        False,
        description=(
            "The output is a pytree (nested dicts, lists, tuples of arrays): compared structure"
            " first, then leaf by leaf, each named by its path (grader/judging/trees.py)."
        ),
    )


class StructureConfig(_Strict):
    """How the learner's function must be built, read from the jaxpr of every program
    that answered a case (grader/judging/requirements.py): what a problem teaches. Terms are
    primitive names (``scan``) or the concepts of grader/judging/requirements.py (``loop``,
    ``cross_device_reduction``, ``host_callback``), so that a rule states an intent
    rather than one spelling of it; ``outer>inner`` is one nested in the other."""

    require: list[str] = Field(
        default_factory=list,
        description="Terms every program must contain (loop, shard_map).",
    )
    forbid: list[str] = Field(
        default_factory=list,
        description=(
            "Terms no program may contain (host_callback, while); outer>inner names one"
            " nested in the other (loop>cross_device_reduction: a reduction inside a loop)."
        ),
    )
    exactly: dict[str, int] = Field(
        default_factory=dict,
        description=(
            "Terms (no nesting) that must occur exactly this many times in each program's"
            " text: cross_device_reduction = 1 is one reduction, not one per micro-batch."
        ),
    )
    explanation: str = Field(
        min_length=1,
        max_length=300,
        description="What the problem asks for, quoted in the verdict (one sentence).",
    )

    @field_validator("require", "forbid")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        for name in names:
            parts = name.split(">")
            if len(parts) > 2 or not all(IDENTIFIER.match(part) for part in parts):
                raise ValueError(f"{name!r} is not a primitive or concept name (or outer>inner)")
        return names

    @field_validator("exactly")
    @classmethod
    def _counts(cls, counts: dict[str, int]) -> dict[str, int]:
        for name, count in counts.items():
            if not IDENTIFIER.match(name) or count < 0:
                raise ValueError(f"{name!r} = {count}: a primitive or concept and a count >= 0")
        return counts


class RegimeConfig(_Strict):
    """One kind of input the statement promises the hidden cases include; cases.py's
    ``regimes()`` gives its predicate and `jaxjudge check` fails when some variant has
    no hidden case in it."""

    name: str = Field(pattern=SLUG.pattern, description="Its key in cases.py regimes().")
    promise: str = Field(
        min_length=1,
        max_length=200,
        description="What the statement promises, as learners read it on the problem page.",
    )


class MemoryBudgetConfig(_Strict):
    """The compiled function's temporary memory must not grow with the batch: measured
    with XLA's memory analysis on the memory probes of cases.py (grader/judging/requirements.py)."""

    max_growth: float = Field(
        2.0,
        gt=1.0,
        le=100.0,
        description=(
            "At most this ratio between the temporary bytes at the last (largest) memory"
            " probe and at the first."
        ),
    )
    explanation: str = Field(
        min_length=1,
        max_length=300,
        description="What the problem asks for, quoted in the verdict (one sentence).",
    )


class LimitsConfig(_Strict):
    """Limits per submission (grader/running/timing.py, grader/calibration.py). Time is CPU time,
    every process and thread of the sandbox together: ``CPU_FACTOR`` (5) times what the
    reference needs on the grading machine, never less than ``cpu_seconds``; the wall
    clock is only a backstop, three times that budget and never less than
    ``wall_seconds``."""

    cpu_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="The least CPU time a submission gets, whatever the reference needs.",
    )
    wall_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description=(
            "The least wall-clock time before a submission is stopped (a backstop for code"
            " that sleeps or blocks); also its CPU budget until this machine is calibrated."
        ),
    )
    memory_mb: int = Field(
        2048,
        ge=512,
        le=65536,
        description="Memory the whole sandbox may use (every process and its tmpfs files), MiB.",
    )


def _argument_names(names: list[str]) -> list[str]:
    for name in names:
        if not IDENTIFIER.match(name):
            raise ValueError(
                f"{name!r} is not allowed: use a Python name (letters, digits and"
                " underscores, not starting with a digit)"
            )
    if len(set(names)) != len(names):
        raise ValueError("argument names must be unique; one is repeated")
    return names


class Credit(StrEnum):
    """How a submission's score is computed from its parts (and author tests)."""

    PER_CASE = "per-case"
    PER_PART = "per-part"
    PER_TEST = "per-test"
    ALL_OR_NOTHING = "all-or-nothing"


class PartConfig(_Strict):
    """One graded function of a problem with several ([[parts]])."""

    name: str = Field(
        pattern=IDENTIFIER.pattern, description="The part's name: cases.py's Case(part=...)."
    )
    entry_point: str = Field(
        pattern=IDENTIFIER.pattern, description="Name of the function learners write."
    )
    arguments: list[str] = Field(min_length=1, description="Argument names, in call order.")
    outputs: list[OutputConfig] = Field(
        min_length=1,
        description="What the function returns; with several, it returns a tuple in this order.",
    )
    weight: float = Field(1.0, gt=0, le=1000, description="The part's points in the score.")
    tolerance: ToleranceConfig | None = Field(
        None, description="Overrides the problem's tolerance for this part's outputs."
    )

    @field_validator("arguments")
    @classmethod
    def _arguments_are_identifiers(cls, names: list[str]) -> list[str]:
        return _argument_names(names)


class ProblemConfig(_Strict):
    title: str = Field(min_length=1, max_length=120, description="Shown in lists and on the page.")
    track: str = Field(
        pattern=SLUG.pattern, description="Track (series of problems) this one belongs to."
    )
    position: int = Field(ge=1, description="Position within the track, 1 first.")
    difficulty: Literal["easy", "medium", "hard"] = Field(description="Displayed difficulty.")
    estimated_minutes: int = Field(ge=1, le=600, description="Rough time to solve, in minutes.")
    tags: list[str] = Field(default_factory=list, description="Topic tags shown with the problem.")
    entry_point: str | None = Field(
        None,
        pattern=IDENTIFIER.pattern,
        description="Name of the function learners write (a problem without [[parts]]).",
    )
    arguments: list[str] | None = Field(
        None, min_length=1, description="Argument names, in call order (without [[parts]])."
    )
    outputs: list[OutputConfig] | None = Field(
        None,
        min_length=1,
        description=(
            "What the function returns; with several, it returns a tuple in this order"
            " (without [[parts]])."
        ),
    )
    parts: list[PartConfig] = Field(
        default_factory=list,
        description=(
            "The graded functions of a problem with several ([[parts]]), each with its own"
            " cases, outputs, tolerance and weight; in place of entry_point, arguments and"
            " [[outputs]]."
        ),
    )
    credit: Credit = Field(
        Credit.PER_CASE,
        description=(
            "How the score is computed: per-case (each part's fraction of cases, weighted),"
            " per-part (a part's weight only when all its cases pass), per-test (author"
            " tests only) or all-or-nothing."
        ),
    )
    tolerance: ToleranceConfig = Field(description="Default tolerance for every output.")
    limits: LimitsConfig = Field(
        default_factory=LimitsConfig, description="Resource limits per submission."
    )
    device: Literal["cpu", "gpu", "any"] = Field(
        "any", description="Which workers may grade this problem."
    )
    trusted_runs: Literal["auto", "eager", "compiled"] = Field(
        "auto",
        description=(
            "How the reference and the mistakes run over every variant: op by op (fast when"
            " every case needs its own program: a seed that differs per case) or each"
            " solution under jax.jit once per compile signature (fast when a few programs"
            " answer every variant; 4-20x for those). auto: compiled where the bank has at"
            " most one compile signature per four cases, else op by op."
        ),
    )
    structure: StructureConfig | None = Field(
        None, description="Primitives the learner's jaxpr must or must not contain."
    )
    memory_budget: MemoryBudgetConfig | None = Field(
        None,
        description="Temporary memory must not grow with the batch (cases.py memory_probes()).",
    )
    allow_host_callbacks: bool = Field(
        False,
        description=(
            "Whether a problem with a structure or memory requirement allows host callbacks"
            " (pure_callback, io_callback, ffi_call): they hide a computation from the"
            " program the requirements are read from, so they are refused unless allowed."
        ),
    )
    regimes: list[RegimeConfig] = Field(
        default_factory=list,
        description="The kinds of input the statement promises hidden cases of (cases.py regimes()).",
    )
    variants: int = Field(
        16,
        ge=8,
        le=64,
        description=(
            "How many draws of the hidden inputs cases.py makes (cases(seed) for seed = 0 .."
            " variants - 1); each submission is graded on one, drawn at random and kept secret."
        ),
    )

    @field_validator("arguments")
    @classmethod
    def _arguments_are_identifiers(cls, names: list[str] | None) -> list[str] | None:
        return None if names is None else _argument_names(names)

    @model_validator(mode="after")
    def _one_function_or_parts(self) -> ProblemConfig:
        single = [
            name
            for name in ("entry_point", "arguments", "outputs")
            if getattr(self, name) is not None
        ]
        if self.parts and single:
            raise ValueError(
                f"a problem with [[parts]] states each part's entry_point, arguments and"
                f" [[parts.outputs]]; remove the top-level {', '.join(single)}"
            )
        if not self.parts and len(single) != 3:
            missing = [n for n in ("entry_point", "arguments", "outputs") if n not in single]
            raise ValueError(
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required and"
                " missing: a problem states entry_point,"
                " arguments and [[outputs]], or several [[parts]] (see docs/authoring.md)"
            )
        for field_name in ("name", "entry_point"):
            seen = [getattr(part, field_name) for part in self.parts]
            repeated = sorted({value for value in seen if seen.count(value) > 1})
            if repeated:
                raise ValueError(
                    f"parts: each part needs its own {field_name}; {repeated[0]!r} is repeated"
                )
        return self


@dataclass(frozen=True)
class Part:
    """One graded function: a part of a problem with [[parts]], or the one implicit
    part (named after its entry point, weight 1) of a problem without them. Every
    consumer reads a problem's functions through its parts, never its config."""

    name: str
    entry_point: str
    arguments: tuple[str, ...]
    outputs: tuple[OutputConfig, ...]
    weight: float
    tolerance_config: ToleranceConfig
    index: int = 0
    named_in_cases: bool = False  # cases.py names it (Case(part=...)): a problem with [[parts]]

    @property
    def tree_outputs(self) -> frozenset[int]:
        """Which outputs are pytrees (by position)."""
        return frozenset(i for i, output in enumerate(self.outputs) if output.tree)

    def tolerance(self, output_index: int, device: str = "cpu") -> Tolerance:
        """Output ``output_index``'s tolerance on ``device``: its own, else the part's,
        else the problem's."""
        own = self.outputs[output_index].tolerance
        return (own or self.tolerance_config).on(device)

    @property
    def signature(self) -> str:
        return f"def {self.entry_point}({', '.join(self.arguments)}):"


def parts_of(config: ProblemConfig) -> tuple[Part, ...]:
    """The problem's graded functions, in problem.toml's order."""
    if not config.parts:
        assert config.entry_point and config.arguments and config.outputs  # the schema's rule
        return (
            Part(
                name=config.entry_point,
                entry_point=config.entry_point,
                arguments=tuple(config.arguments),
                outputs=tuple(config.outputs),
                weight=1.0,
                tolerance_config=config.tolerance,
            ),
        )
    return tuple(
        Part(
            name=part.name,
            entry_point=part.entry_point,
            arguments=tuple(part.arguments),
            outputs=tuple(part.outputs),
            weight=part.weight,
            tolerance_config=part.tolerance or config.tolerance,
            index=index,
            named_in_cases=True,
        )
        for index, part in enumerate(config.parts)
    )


@dataclass(frozen=True)
class Mistake:
    """A known-wrong solution and the one-line diagnosis shown when a learner matches it."""

    name: str
    path: Path
    diagnosis: str

    @property
    def source(self) -> str:
        return self.path.read_text()


class UntrustedCases(Protocol):
    """Runs an untrusted author's cases.py (in a sandbox) and gives what it produced:
    the validated bank and the regimes' answers; ``fresh``: run it again rather than
    read what an earlier run left (check's determinism test)."""

    def __call__(self, problem: Problem, *, fresh: bool) -> tuple[CaseBank, RegimeAnswers]: ...


# grader/author_code.py registers its sandboxed run here when it is imported (the
# layers keep problems/ below running/, docs/architecture.md). Until then no untrusted
# cases.py runs at all: an untrusted problem's cases fail closed, with a clear error.
_UNTRUSTED_CASES: list[UntrustedCases] = []


def run_untrusted_cases_with(run: UntrustedCases) -> None:
    _UNTRUSTED_CASES[:] = [run]


@dataclass(frozen=True)
class Problem:
    """``trusted``: its author's code (cases.py, the reference, the mistakes) may run
    in the grader's own processes, as the bank's does; an untrusted problem's (a
    course's, written by an instructor) runs only in sandboxes, like learner code."""

    slug: str
    folder: Path
    config: ProblemConfig
    mistakes: tuple[Mistake, ...]
    source: ProblemSource
    trusted: bool = True

    @property
    def reference_path(self) -> Path:
        return self.source.reference

    def text(self, name: str) -> str:
        return (self.folder / name).read_text()

    @property
    def statement(self) -> str:
        return self.text("statement.md")

    @property
    def starter(self) -> str:
        return self.text("starter.py")

    @property
    def solution_walkthrough(self) -> str:
        return self.text("solution.md")

    @property
    def hints(self) -> list[str]:
        """Ordered hints: each ``## `` heading in hints.md starts one."""
        sections = re.split(r"^## ", self.text("hints.md"), flags=re.MULTILINE)
        return [section.strip() for section in sections[1:] if section.strip()]

    @property
    def reference_source(self) -> str:
        return self.reference_path.read_text()

    @cached_property
    def quiz(self) -> Quiz | None:
        """The questions of quiz.toml (grader/problems/quiz.py), if the folder has one."""
        return load_quiz(self.folder)

    @property
    def has_requirements(self) -> bool:
        return self.config.structure is not None or self.config.memory_budget is not None

    @cached_property
    def case_bank(self) -> CaseBank:
        """Samples, every variant's hidden cases, and (with a memory budget) the probes."""
        if not self.trusted:
            return self._sandboxed[0]
        return self.cases_again()

    def cases_again(self) -> CaseBank:
        """cases.py run once more (not the bank kept): determinism is two runs agreeing."""
        if not self.trusted:
            return self._run_untrusted(fresh=True)[0]
        return load_cases(
            self.folder / "cases.py",
            self.part_arguments,
            self.config.variants,
            with_probes=self.config.memory_budget is not None,
        )

    @cached_property
    def regime_answers(self) -> RegimeAnswers:
        """What cases.py's regimes() says of every variant's hidden cases."""
        if not self.trusted:
            return self._sandboxed[1]
        return regime_answers(self.folder / "cases.py", self.case_bank)

    @cached_property
    def regime_tests(self) -> dict[str, Regime]:
        """cases.py's predicate for each regime problem.toml promises (a trusted
        problem's: an untrusted predicate never runs in this process)."""
        if not self.trusted:
            raise ProblemError(
                self.folder / "cases.py", "regimes()", "runs only in a sandbox for this problem"
            )
        return load_regimes(self.folder / "cases.py")

    @cached_property
    def _sandboxed(self) -> tuple[CaseBank, RegimeAnswers]:
        return self._run_untrusted(fresh=False)

    def _run_untrusted(self, *, fresh: bool) -> tuple[CaseBank, RegimeAnswers]:
        if not _UNTRUSTED_CASES:
            raise ProblemError(
                self.folder / "cases.py",
                None,
                "this problem's author is not trusted, and no sandbox is set up to run its code",
            )
        return _UNTRUSTED_CASES[0](self, fresh=fresh)

    @cached_property
    def parts(self) -> tuple[Part, ...]:
        """The graded functions: [[parts]], or the one implicit part of a problem
        without them."""
        return parts_of(self.config)

    @property
    def has_parts(self) -> bool:
        """Whether problem.toml states [[parts]] (cases then name their part)."""
        return bool(self.config.parts)

    def part_of(self, case: Case) -> Part:
        """The part ``case`` exercises (the loader has checked that it names one)."""
        if case.part is None:
            return self.parts[0]
        for part in self.parts:
            if case.part in (part.name, part.entry_point):
                return part
        raise ProblemError(self.folder / "cases.py", f"case {case.name!r}", "names no part")

    def parts_defined_by(self, source: str) -> tuple[Part, ...]:
        """The parts whose entry points ``source`` (a mistake's) defines at its top level,
        read with ``ast`` (nothing runs): a mistake is judged on those parts' cases only."""
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return ()
        names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        return tuple(part for part in self.parts if part.entry_point in names)

    @property
    def part_arguments(self) -> list[str] | dict[str, list[str]]:
        """What cases.py's loader checks each case's arguments against: the one list,
        or each part's by name."""
        if not self.has_parts:
            return list(self.parts[0].arguments)
        return {part.name: list(part.arguments) for part in self.parts}

    @property
    def tree_outputs(self) -> frozenset[int]:
        """Which outputs of the first part are pytrees (by position)."""
        return self.parts[0].tree_outputs

    def tolerance(
        self, output_index: int, device: str = "cpu", *, part: Part | None = None
    ) -> Tolerance:
        """Output ``output_index``'s tolerance on ``device`` (of ``part``, else the first):
        its own, else the part's, else the problem's."""
        return (part or self.parts[0]).tolerance(output_index, device)

    @property
    def tolerance_devices(self) -> tuple[str, ...]:
        """The devices whose tolerance differs somewhere: the CPU, and the GPU if stated."""
        stated: list[ToleranceConfig | None] = [self.config.tolerance]
        for part in self.parts:
            stated += [part.tolerance_config, *(o.tolerance for o in part.outputs)]
        return ("cpu", "gpu") if any(t and t.gpu for t in stated) else ("cpu",)


def _read_config(path: Path) -> ProblemConfig:
    if not path.is_file():
        raise ProblemError(path, None, "missing: every problem needs a problem.toml")
    text = path.read_text()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise toml_error(path, error) from None
    try:
        return ProblemConfig.model_validate(raw)
    except ValidationError as error:
        raise schema_error(path, error, text, ProblemConfig) from None


def _diagnosis(path: Path) -> str:
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as error:
        raise ProblemError(
            path, None, f"syntax error on line {error.lineno}: {error.msg}"
        ) from None
    docstring = ast.get_docstring(tree)
    if not docstring or not docstring.strip():
        raise ProblemError(
            path, "docstring", "a mistake starts with a docstring whose first line is its diagnosis"
        )
    first = docstring.strip().splitlines()[0].strip()
    if len(first) > 240:
        raise ProblemError(
            path, "docstring", "the diagnosis (first docstring line) must be at most 240 characters"
        )
    return first


def load_mistakes(folder: Path) -> tuple[Mistake, ...]:
    directory = folder / "mistakes"
    if not directory.is_dir():
        return ()
    return tuple(
        Mistake(name=path.stem, path=path, diagnosis=_diagnosis(path))
        for path in sorted(directory.glob("*.py"))
        if not path.name.startswith("_")
    )


def load_problem(folder: Path, *, trusted: bool = True) -> Problem:
    """Load and validate a problem folder and its reference (``<root>/problems/<slug>`` and
    ``<root>/reference_solutions/<slug>.py``); raise ``ProblemError`` naming the file and field.
    Loading runs none of the author's code (mistakes' docstrings are read with ``ast``);
    ``trusted=False``: none of it ever runs in this process (``Problem.trusted``)."""
    source = ProblemSource.of(folder)
    slug = folder.name
    if not SLUG.match(slug):
        raise ProblemError(
            folder,
            None,
            f"the folder name {slug!r} is not allowed: use lowercase letters and digits,"
            " words joined by single hyphens (like my-problem)",
        )
    config = _read_config(folder / "problem.toml")
    for name in REQUIRED_TEXT_FILES:
        path = folder / name
        if not path.is_file():
            raise ProblemError(path, None, "missing")
        if not path.read_text().strip():
            raise ProblemError(path, None, "is empty")
    if config.credit is Credit.PER_TEST and not (folder / "tests.py").is_file():
        raise ProblemError(
            folder / "problem.toml",
            "credit",
            "'per-test' counts author tests only, and this problem has no tests.py",
        )
    if not source.reference.is_file():
        raise ProblemError(
            source.reference,
            None,
            "missing: the reference solution lives here, outside the problem folder",
        )
    problem = Problem(
        slug=slug,
        folder=folder,
        config=config,
        mistakes=load_mistakes(folder),
        source=source,
        trusted=trusted,
    )
    problem.quiz  # noqa: B018  (an invalid quiz.toml is the folder's error, found here)
    return problem


def problem_folders(content_dir: Path | None = None) -> list[Path]:
    """The problem folders under ``content_dir`` (the configured one by default)."""
    root = (content_dir or settings.content_dir) / PROBLEMS
    return sorted(
        path for path in root.iterdir() if path.is_dir() and (path / "problem.toml").exists()
    )


def find_problem(slug: str) -> Path | None:
    folder = ProblemSource(settings.content_dir, slug).folder
    return folder if SLUG.match(slug) and (folder / "problem.toml").is_file() else None
