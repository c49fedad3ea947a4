"""What a problem page shows of each sample case: its inputs and the reference's
outputs, as text and JSON-safe values. Computed once per version from the trusted
outputs and stored with the version, so showing a page never runs JAX."""

from __future__ import annotations

from pydantic import BaseModel, Field, TypeAdapter

from grader.judging.report import describe_value, shown_output
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Problem


class SampleView(BaseModel):
    """One sample case as learners see it (samples are public by definition)."""

    name: str
    inputs: dict[str, str] = Field(description="Each argument described: dtype, shape, values.")
    expected: list[object] = Field(description="The reference's outputs, one entry per output.")


_many = TypeAdapter(list[SampleView])


def sample_views(problem: Problem, trusted: TrustedOutputs) -> list[SampleView]:
    views = []
    for case in problem.case_bank.samples:
        outputs = trusted.reference.get(case.name) or []
        views.append(
            SampleView(
                name=case.name,
                inputs={name: describe_value(value) for name, value in case.args.items()},
                expected=[shown_output(output) for output in outputs],
            )
        )
    return views


def encode(views: list[SampleView]) -> str:
    return _many.dump_json(views).decode()


def decode(text: str) -> list[SampleView]:
    return _many.validate_json(text)
