"""The docs' examples that are files or settings, each used as the program uses it:
the quiz, tolerance and parts tables loaded by the problem loader, the example cases.py
executed, each schema error message made by its mistake, the settings read by the
settings, the make targets found in the Makefile. Nothing here starts a sandbox."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from app.core.config import WebSettings
from app.core.config import settings as web_settings
from app.sso import saml_providers
from grader import doctor
from grader.cases import Case
from grader.config import PROJECT_ROOT
from grader.errors import ProblemError
from grader.problems.problem import ProblemConfig, load_problem, parts_of
from grader.problems.quiz import load_quiz
from grader.problems.scaffold import scaffold as scaffold_problem
from tests.docs.blocks import Block, all_blocks, block, logical_lines

QUIZ = block("docs/authoring.md", "[[questions]]")
TOLERANCE = block("docs/authoring.md", "[tolerance]")
PARTS = block("docs/authoring.md", 'credit = "per-part"')
CASES = block("docs/authoring.md", "import numpy as np\nfrom grader.cases")
LTI_SETTINGS = block("docs/lti.md", "JAXJUDGE_PUBLIC_URL=")
SAML_SETTINGS = block("docs/deployment.md", "JAXJUDGE_SAML_IDPS=")
RUN = [QUIZ, TOLERANCE, PARTS, CASES, LTI_SETTINGS, SAML_SETTINGS]

SLUG = "my-problem"  # the authoring guide's example problem


@pytest.fixture
def scaffold(tmp_path: Path) -> Path:
    """`jaxjudge new my-problem`'s files, as the guide's examples start from them."""
    scaffold_problem(SLUG, tmp_path)
    return tmp_path / "problems" / SLUG


def test_the_quiz_example_loads_as_written(scaffold: Path) -> None:
    (scaffold / "quiz.toml").write_text(QUIZ.text)
    quiz = load_quiz(scaffold)
    assert quiz is not None
    (question,) = quiz.questions
    assert question.id == "why-scan" and [c.correct for c in question.choices] == [True, False]


def test_the_gpu_tolerance_example_holds_on_the_gpu_only(scaffold: Path) -> None:
    toml = scaffold / "problem.toml"
    scaffold_tolerance = "[tolerance]\nrtol = 1e-5\natol = 1e-6\n"
    assert scaffold_tolerance in toml.read_text()
    toml.write_text(toml.read_text().replace(scaffold_tolerance, TOLERANCE.text))
    problem = load_problem(scaffold)
    (part,) = problem.parts
    assert part.tolerance(0, "cpu").rtol == 1e-4 and part.tolerance(0, "gpu").rtol == 5e-4
    assert problem.tolerance_devices == ("cpu", "gpu")


def test_the_parts_example_is_a_valid_problem_table() -> None:
    """The parts of the bank's weighted-accumulator, replaced by the guide's."""
    bank = tomllib.loads((PROJECT_ROOT / "problems/weighted-accumulator/problem.toml").read_text())
    assert "parts" in bank
    config = ProblemConfig.model_validate({**bank, **tomllib.loads(PARTS.text)})
    parts = parts_of(config)
    assert [(p.name, p.entry_point, p.weight) for p in parts] == [
        ("init", "init_accumulator", 1.0),
        ("accumulate", "accumulate", 2.0),
    ]
    assert parts[0].tolerance(0).rtol == 1e-6 and parts[0].outputs[0].tree


def test_the_cases_example_draws_fixed_samples_and_fresh_hidden_cases() -> None:
    module = ModuleType("cases")
    exec(compile(CASES.text, str(CASES), "exec"), module.__dict__)
    first, second = list(module.cases(1)), list(module.cases(2))
    assert all(isinstance(c, Case) for c in first + second)
    assert [c.name for c in first] == ["small", "wide"] and first[0].sample
    np.testing.assert_array_equal(first[0].args["x"], second[0].args["x"])  # samples: fixed
    assert not np.array_equal(first[1].args["x"], second[1].args["x"])  # hidden: per seed


def _code_lines(text: str) -> list[str]:
    """Each line's code, stripped, without its comment; lines that elide ("...") left out."""
    code = (line.split("  #", 1)[0].strip() for line in text.splitlines())
    return [line for line in code if line and "..." not in line and not line.startswith("#")]


def _holds_in_order(shown: list[str], source: list[str]) -> bool:
    rest = iter(source)
    return all(any(line == later for later in rest) for line in shown)


@pytest.mark.parametrize("fragment", ["def regimes():", "def memory_probes():"])
def test_each_fragment_is_a_bank_problems_own(fragment: str) -> None:
    """Every line of code the fragment shows is in one bank problem's cases.py, in order."""
    shown = _code_lines(block("docs/authoring.md", fragment).text)
    found = [
        path.parent.name
        for path in (PROJECT_ROOT / "problems").glob("*/cases.py")
        if _holds_in_order(shown, _code_lines(path.read_text()))
    ]
    assert found, f"no bank problem's cases.py holds {shown}"


# Each message of the guide's list, made by the mistake it names (in the scaffold).
def _edit(old: str, new: str) -> tuple[str, str]:
    return old, new


MISTAKES = {
    "track": _edit('track = "my-track"', 'track = "My Track"'),
    "arguments": _edit('arguments = ["x", "scale"]', 'arguments = ["x", "2scale"]'),
    "colour": _edit("position = 1", "position = 1\ncolour = 'red'"),
    "limits.cpu_seconds": _edit("cpu_seconds = 10", "cpu_seconds = -1"),
    "outputs #1.tolerance.atol": _edit(
        'description = "float array with the same shape as x"\n',
        'description = "float array with the same shape as x"\n\n[outputs.tolerance]\nrtol = 1e-3\n',
    ),
    "tolerance.tpu": _edit(
        "atol = 1e-6\n", "atol = 1e-6\n\n[tolerance.tpu]\nrtol = 1e-3\natol = 1e-3\n"
    ),
    "invalid TOML syntax": _edit('title = "My problem"', 'title = "My problem'),
}
QUIZ_MISTAKE = ("questions #1.id", _edit('id = "why-scan"', 'id = "Why Scale"'))
MESSAGES = block("docs/authoring.md", "problems/my-problem/problem.toml line 3")


def _pattern(shown: str) -> re.Pattern[str]:
    """A shown message as a pattern: "..." stands for the rest of a list."""
    return re.compile(".*?".join(re.escape(p) for p in shown.split("...")) + ".*", re.S)


def _message(folder: Path) -> str:
    with pytest.raises(ProblemError) as caught:
        load_problem(folder)
    return str(caught.value)


@pytest.mark.parametrize("shown", MESSAGES.text.splitlines())
def test_each_error_message_shown_is_what_its_mistake_gets(scaffold: Path, shown: str) -> None:
    field = shown.split(": ", 2)[1]
    if shown.startswith(f"problems/{SLUG}/quiz.toml"):
        assert field == QUIZ_MISTAKE[0]
        old, new = QUIZ_MISTAKE[1]
        (scaffold / "quiz.toml").write_text(QUIZ.text.replace(old, new))
    else:
        old, new = MISTAKES[field]
        toml = scaffold / "problem.toml"
        assert old in toml.read_text()
        toml.write_text(toml.read_text().replace(old, new, 1))
    made = _message(scaffold)
    relative = made.replace(f"{scaffold.parent.parent}/", "")
    assert _pattern(shown).fullmatch(relative), (shown, relative)


def _assignments(example: Block) -> dict[str, str]:
    """A block of VAR=value lines (comments after them), as a shell reads them."""
    found = {}
    for line in logical_lines(example.text):
        (word,) = shlex.split(line, comments=True)
        name, value = word.split("=", 1)
        found[name] = value
    return found


def test_the_lti_settings_are_read_as_the_guide_says(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _assignments(LTI_SETTINGS)
    for name, value in shown.items():
        monkeypatch.setenv(name, value)
    read = WebSettings()
    assert read.public_url == "https://jaxjudge.example.edu" and read.secure_cookies
    assert read.frame_origins == ["https://canvas.example.edu", "https://moodle.example.edu"]
    assert [str(n) for n in read.registration_private_networks] == ["10.20.0.0/16"]


def test_the_saml_setting_names_one_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    (value,) = _assignments(SAML_SETTINGS).values()
    monkeypatch.setattr(web_settings, "saml_idps", value)
    (provider,) = saml_providers.providers()
    assert (provider.name, provider.label) == ("uni", "University of Example")
    assert provider.student_id_attribute == "urn:oid:1.3.6.1.4.1.25178.1.2.14"


def test_the_doctor_output_shown_has_the_doctors_checks_in_order() -> None:
    shown = block("docs/deployment.md", "$ jaxjudge doctor").text.splitlines()
    statuses = "|".join(s.value for s in doctor.Status)
    checks = [
        m.group(1).strip()
        for line in shown
        if (m := re.match(rf"^(?:{statuses})\s+(.{{16}})", line))
    ]
    assert checks == [name for name, _ in doctor.CHECKS]


MAKE_BLOCKS = [block("README.md", "make run"), *(
    b for b in all_blocks() if b.doc == "docs/development.md"
)]  # fmt: skip


def test_every_make_target_the_docs_name_exists() -> None:
    targets = {
        line.split()[1]
        for b in MAKE_BLOCKS
        for line in logical_lines(b.text)
        if line.startswith("make ")
    } | {word for b in MAKE_BLOCKS for word in re.findall(r"^make \S+ (\S+)", b.text, re.M)}
    targets -= {"#"}
    assert {"run", "test", "lint", "typecheck", "bench"} <= targets
    for target in sorted(targets):
        dry = subprocess.run(
            ["make", "-n", target], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
        )
        assert dry.returncode == 0, (target, dry.stderr)
