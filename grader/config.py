"""The grader's settings, read from ``JAXJUDGE_*`` environment variables.

Everything that grading needs and nothing of the web app: where problems,
references and writable state live, the runtime, the sandbox and its limits,
the warm pool. The web app has its own (app/core/config.py) and reads this one;
the grader never reads the web's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class GraderSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JAXJUDGE_", extra="ignore")

    content_dir: Path = Field(
        PROJECT_ROOT,
        description=(
            "Folder holding `problems/` (one folder per problem) and `reference_solutions/`"
            " (one `<slug>.py` each, never visible to learner code)."
        ),
    )
    data_dir: Path = Field(PROJECT_ROOT / "var", description="Writable state: caches, databases.")
    child_python: Path = Field(
        Path(sys.executable),
        description="Interpreter that runs child processes (the pinned runtime).",
    )
    max_source_bytes: int = Field(256 * 1024, description="Largest submission accepted, in bytes.")
    stdout_limit_bytes: int = Field(
        1024 * 1024, description="Output a submission may print before output_limit_exceeded."
    )
    stdout_keep_bytes: int = Field(
        8 * 1024, description="Captured output kept and shown to the learner."
    )
    max_output_elements: int = Field(
        1_000_000, description="Largest array a child may return for one output."
    )
    sandbox: bool = Field(
        True,
        description="Run learner code in bubblewrap. Turn off only to develop on a machine without it.",
    )
    pool_size: int = Field(2, ge=1, description="Warm sandboxed children kept ready per device.")
    pool_memory_mb: int = Field(
        4096,
        ge=512,
        description=(
            "Memory a pooled child may use while it starts and waits; the problem's own limit"
            " replaces it when a job is delivered. No problem may ask for more."
        ),
    )
    pool_min_available_mb: int = Field(
        1024,
        ge=0,
        description=(
            "Below this much memory left to use (the machine's, or its container's limit"
            " less what it holds), the pool starts no idle child and tries again every 30 s;"
            " a submission still gets a child of its own. 0 turns the check off."
        ),
    )
    park_seconds: float = Field(
        120.0,
        ge=0,
        description=(
            "How long a run that passed every sample keeps its child, paused before the"
            " hidden cases, for its learner's next submission of the same code"
            " (grader/parking.py); 0 turns it off."
        ),
    )
    park_children: int | None = Field(
        None,
        ge=0,
        description=(
            "Children kept for held runs at once, per grading process; a newer run lets"
            " the one held longest go. Unset: as many as the memory left above"
            " park_min_available_mb holds at 512 MB each, at most 16 (grader/parking.py);"
            " 0 turns held runs off."
        ),
    )
    park_min_available_mb: int = Field(
        2048,
        ge=0,
        description=(
            "Below this much memory left to use (the machine's, or its container's), held"
            " runs are let go, the oldest first."
        ),
    )
    prefer_gpu: bool = Field(
        False, description='Run `device = "any"` problems on a GPU when one is present.'
    )
    gpu_max_sandboxes: int = Field(
        2,
        ge=1,
        description=(
            "GPU children (idle or grading) alive at once on this machine, across workers;"
            " each may use the problem's memory limit on the card (grader/running/gpu_sharing.py)."
        ),
    )
    gpu_context_mb: int = Field(
        1024,
        ge=0,
        description=(
            "Device memory a GPU child holds beyond its allocator's budget (the CUDA context,"
            " modules, library workspaces; `jaxjudge doctor --device gpu` measures it): the"
            " outside watch kills a sandbox above its budget plus this."
        ),
    )
    allow_unbounded_gpu_memory: bool = Field(
        False,
        description=(
            "Let GPU sandboxes start where no cgroup bounds their host memory (no usable"
            " cgroup: docs/deployment.md says what to configure). Off: a GPU worker refuses"
            " to start there."
        ),
    )
    gpu_slot_wait_seconds: float = Field(
        60.0,
        gt=0,
        description="How long a GPU child waits for a slot before its submission is re-queued.",
    )
    use_cgroups: bool = Field(
        True, description="Give each sandbox its own cgroup where the host allows."
    )
    sandbox_max_pids: int = Field(
        512, description="Processes and threads one sandbox may hold (cgroup)."
    )
    sandbox_tmp_bytes: int = Field(
        64 * 1024 * 1024, description="Size of a sandbox's private /tmp (counted in its memory)."
    )
    sandbox_shm_bytes: int = Field(
        16 * 1024 * 1024,
        description="Size of a sandbox's private /dev/shm (counted in its memory).",
    )
    author_cases_seconds: float = Field(
        60.0,
        gt=0,
        le=600,
        description=(
            "Wall clock (and CPU time) for an untrusted author's cases.py to generate every"
            " variant in its sandbox (a course problem's; grader/author_code.py)."
        ),
    )

    @property
    def author_cases_dir(self) -> Path:
        """The case banks untrusted cases.py files generated, one file per content hash:
        written by the grader's own process alone, never bound into a sandbox."""
        return self.data_dir / "cache" / "author-cases"

    @property
    def trusted_cache_dir(self) -> Path:
        """JAX's persistent compilation cache for trusted runs (references,
        mistakes, `check`) only. No sandbox ever sees it: its entries are the
        reference and the mistakes in compiled form."""
        return (self.data_dir / "cache" / "trusted-jax").resolve()

    @property
    def warmup_cache_dir(self) -> Path:
        """The compilation cache filled by the library warm-up alone, one folder per
        device; the only cache sandboxes read (read-only, at the same path)."""
        return (self.data_dir / "cache" / "warmup-jax").resolve()

    @property
    def expected_cache_dir(self) -> Path:
        return self.data_dir / "cache" / "expected"

    @property
    def max_result_frame_bytes(self) -> int:
        # Outputs are at most float64/int64 (8 bytes an element).
        return 8 * self.max_output_elements * 4


settings = GraderSettings()
