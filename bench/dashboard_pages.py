"""Instructor pages on a large synthetic course: prints the median time of each page.

    .venv/bin/python bench/dashboard_pages.py [--learners 300] [--max-submits 12]

Uses a throwaway SQLite database in a temporary folder; grading is not involved
(submissions are inserted already graded).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from app.core.config import settings
from app.core.db import migrate, session_scope
from app.core.security import hash_password
from app.data import accounts, assignments, catalog, courses
from app.data.assignments import AssignmentSettings
from app.models import CourseMember, Submission, User
from app.server.main import create_app


def seed(learners: int, max_submits: int) -> tuple[int, int]:
    random.seed(0)
    with session_scope() as session:
        catalog.sync(session=session)
        slugs = [problem.slug for _version, problem in catalog.live_problems(session=session)]
        teacher = accounts.create_user(
            session=session, name="teacher", password="long bench password", role="instructor"
        )
        course = courses.create_course(session=session, name="Big", instructor=teacher)
        for slug in slugs:
            assignments.assign(
                session=session,
                course=course,
                problem=slug,
                settings=AssignmentSettings(
                    due_at=datetime(2026, 11, 10), opens_at=datetime(2026, 10, 1)
                ),
            )
        password = hash_password("long bench password")
        users = [
            User(name=f"learner{i:04d}", canonical_name=f"learner{i:04d}", password_hash=password)
            for i in range(learners)
        ]
        session.add_all(users)
        session.flush()
        session.add_all(
            CourseMember(
                course_id=course.id, user_id=u.id, role="learner", joined_at=datetime(2026, 10, 1)
            )
            for u in users
        )
        count = 0
        for user in users:
            for slug in slugs:
                for _ in range(random.randint(0, max_submits)):
                    verdict = "accepted" if random.random() < 0.3 else "wrong_answer"
                    result = {"verdict": verdict, "diagnosis": None if verdict == "accepted" else f"mistake {random.randint(0, 5)}",
                              "cases": [{"name": "h1", "hidden": True, "verdict": verdict}]}  # fmt: skip
                    session.add(
                        Submission(
                            user_id=user.id,
                            problem=slug,
                            code="x = 1\n" * 30,
                            mode="submit",
                            status="done",
                            verdict=verdict,
                            score=1.0 if verdict == "accepted" else 0.3,
                            created_at=datetime(2026, 11, 1)
                            + timedelta(hours=random.randint(0, 400)),
                            result_json=json.dumps(result),
                        )
                    )
                    count += 1
        return course.id, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--max-submits", type=int, default=12, help="per learner and problem")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings.database_url = f"sqlite:///{Path(folder) / 'bench.db'}"
        migrate()
        course, count = seed(args.learners, args.max_submits)
        print(f"{args.learners} learners, 5 problems, {count} submissions")
        with TestClient(create_app(workers=0, prepare=False)) as client:
            login = client.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', login)
            assert token
            client.post(
                "/login",
                data={"name": "teacher", "password": "long bench password", "csrf_token": token[1]},
            )
            for path in (
                f"/courses/{course}",
                f"/courses/{course}?sort=solved&show=late",
                f"/courses/{course}/grades.csv",
                f"/courses/{course}/submissions.csv",
                f"/courses/{course}/problems/optax-multisteps",
            ):
                times = []
                for _ in range(5):
                    started = time.perf_counter()
                    response = client.get(path)
                    times.append(time.perf_counter() - started)
                    assert response.status_code == 200, path
                print(
                    f"{path:45} median {statistics.median(times) * 1000:6.0f} ms  {len(response.content) // 1024:5d} KiB"
                )


if __name__ == "__main__":
    main()
