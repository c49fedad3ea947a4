"""What a learner's answers are compared with: the trusted outputs of the reference and
of each known mistake, filed by case key (grader/expected.py computes and caches them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.judging.trees import OutputTree

# One case's outputs from a trusted run: arrays, and trees whose leaves are all arrays.
Outputs = list[np.ndarray[Any, Any] | OutputTree]


@dataclass
class TrustedOutputs:
    reference: dict[str, Outputs]  # by case key
    mistakes: dict[str, dict[str, Outputs]] = field(default_factory=dict)
    # How each mistake failed where it produced no output (for `check`).
    mistake_errors: dict[str, dict[str, str]] = field(default_factory=dict)
    # Why the reference or a mistake does not meet the problem's requirements, by name
    # (grader/judging/requirements.py, read from the programs that answered its samples and
    # probes); absent when it meets them.
    unmet: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    from_cache: bool = False
    # False for the reference's outputs alone (grader/expected.py ``for_grading``): no
    # mistake can be recognised yet.
    diagnoses_ready: bool = True
    # The runtime that computed them (grader/versions.py ``runtime_record``).
    runtime: dict[str, str] = field(default_factory=dict)
