"""Submitting code and waiting for its verdict, with the stages on the way (queued
and where in the queue, grading, done), for the terminal and the notebook alike."""

from __future__ import annotations

import time
from typing import Any, Callable

from jaxjudge_client.errors import CommandError
from jaxjudge_client.http import ApiClient, Upload

Answer = dict[str, Any]  # GET /api/submissions/{id}, as JSON
Progress = Callable[[Answer, float], None]  # the latest answer, seconds since submitting
STREAM_READ_SECONDS = 60.0  # the server says something at least every 15 s


def poll_delay(waited: float) -> float:
    """Seconds until the next look at a submission: often at first (most verdicts take
    about a second), then less (the page's script polls alike)."""
    return 0.1 if waited < 3 else 0.3 if waited < 15 else 1.0


def stage(answer: Answer, waited: float) -> str:
    """Where a submission is, in words: "queued (2nd in line), 1.4 s"."""
    status = answer.get("status")
    if status == "queued":
        position = answer.get("position")
        where = f" ({_ordinal(position)} in line)" if isinstance(position, int) else ""
        return f"queued{where}, {waited:.1f} s"
    if status == "running":
        if answer.get("stage") == "hidden":
            samples = answer.get("samples") or []
            passed = sum(1 for case in samples if case.get("verdict") == "accepted")
            return f"samples {passed}/{len(samples)} passed; hidden cases running, {waited:.1f} s"
        return f"grading the samples, {waited:.1f} s"
    return f"done, {waited:.1f} s"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def submit(
    client: ApiClient,
    problem: str,
    code: str,
    *,
    mode: str = "submit",
    timeout: float = 300.0,
    progress: Progress | None = None,
) -> Answer:
    """Send ``code`` for ``problem`` (``mode``: submit, or run for the samples only) and
    return the finished answer."""
    created = client.request(
        "POST", "/api/submissions", {"problem": problem, "code": code, "mode": mode}
    )
    return wait(client, int(created["id"]), timeout=timeout, progress=progress)


def submit_notebook(
    client: ApiClient,
    problem: str,
    content: bytes,
    filename: str,
    *,
    mode: str = "submit",
    timeout: float = 300.0,
    progress: Progress | None = None,
) -> tuple[Answer, Answer]:
    """Send a notebook (.ipynb) for ``problem``: the server takes the entry points' code
    from it. The finished answer, and what the server said of the notebook (``cells``,
    ``notes``: what it left out, ``missing``)."""
    upload = Upload({"problem": problem, "mode": mode}, "notebook", filename, content)
    created = client.request("POST", "/api/submissions/notebook", upload=upload)
    answer = wait(client, int(created["id"]), timeout=timeout, progress=progress)
    return answer, created


def submit_course_notebook(
    client: ApiClient,
    course: int,
    name: str,
    content: bytes,
    filename: str,
    *,
    timeout: float = 300.0,
) -> list[tuple[Answer, Answer | None]]:
    """Send a notebook for a course's notebook assignment ``name``: for each of its
    problems, what the server said (``problem``, ``id`` or ``reason``, ``notes``) and
    the finished answer where a submission was made."""
    upload = Upload({"name": name}, "notebook", filename, content)
    created = client.request("POST", f"/api/courses/{course}/notebook-submissions", upload=upload)
    return [
        (made, wait(client, int(made["id"]), timeout=timeout) if made.get("id") else None)
        for made in created["submissions"]
    ]


def notebook_lines(made: Answer) -> list[str]:
    """What the server took from a notebook and what it left out, a line each."""
    cells = ", ".join(str(c) for c in made.get("cells") or [])
    lines = [f"from the notebook's cells {cells}" if cells else "from the notebook"]
    lines += [f"  left out: {note}" for note in made.get("notes") or []]
    if made.get("missing"):
        lines.append(f"  not defined in the notebook: {', '.join(made['missing'])}")
    return lines


def wait(
    client: ApiClient,
    submission_id: int,
    *,
    timeout: float = 300.0,
    progress: Progress | None = None,
) -> Answer:
    """The finished answer: from the submission's event stream, or by polling where the
    server refuses a stream (busy) or something on the way does not pass it."""
    started = time.monotonic()
    answer: Answer = {"status": "queued"}
    try:  # pushed by the server the moment it changes, as the page gets it
        for kind, pushed in client.events(
            f"/api/submissions/{submission_id}/events", timeout=min(timeout, STREAM_READ_SECONDS)
        ):
            if kind not in ("progress", "done") or not isinstance(pushed, dict):
                break  # "again": the stream's time is up; read on by polling
            answer = pushed
            if progress is not None:
                progress(answer, time.monotonic() - started)
            if answer.get("status") == "done":
                return answer
    except (OSError, ValueError):
        pass  # refused (a busy server), a proxy that does not stream: poll instead
    while time.monotonic() - started < timeout:
        answer = client.request("GET", f"/api/submissions/{submission_id}")
        waited = time.monotonic() - started
        if progress is not None:
            progress(answer, waited)
        if answer.get("status") == "done":
            return answer
        time.sleep(poll_delay(waited))
    raise CommandError(
        f"no verdict within {timeout:g} s; submission {submission_id} is still"
        f" {answer.get('status')} (ask again later: jaxjudge-client status {submission_id})"
    )
