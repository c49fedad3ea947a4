"""The markers tell the truth (tests/conftest.py): what a marker names, an unmarked
test cannot do, and an unmarked test that runs long fails."""

from __future__ import annotations

import pytest
from playwright.sync_api import BrowserType

from grader import author_code
from grader.running import devices, gpu_card, supervise
from grader.running.launch import PlainLauncher

pytest_plugins = ["pytester"]


def test_unmarked_tests_cannot_start_a_child_or_a_browser() -> None:
    with pytest.raises(AssertionError, match=r"mark\.sandbox"):
        supervise.StartedChild(PlainLauncher(trusted=True), device="cpu", memory_mb=256)
    with pytest.raises(AssertionError, match=r"mark\.browser"):
        BrowserType.launch(None)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match=r"mark\.sandbox"):  # an untrusted cases.py's
        author_code._run(None, None)  # type: ignore[arg-type]


@pytest.mark.sandbox
def test_where_there_is_a_gpu_an_unmarked_test_cannot_ask_it_or_start_a_child_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(devices, "gpu_available", lambda: True)
    with pytest.raises(AssertionError, match=r"mark\.gpu"):
        gpu_card.nvidia_smi("--query-gpu=memory.total")
    with pytest.raises(AssertionError, match=r"mark\.gpu"):
        supervise.StartedChild(PlainLauncher(trusted=True), device="gpu", memory_mb=256)


def test_an_unmarked_test_over_the_line_fails_and_a_slow_one_does_not(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        "from tests.conftest import pytest_addoption, pytest_runtest_makereport  # noqa: F401\n"
    )
    pytester.makeini("[pytest]\nunmarked_seconds_max = 0.3\nmarkers =\n    slow: long\n")
    pytester.makepyfile(
        """
        import time
        import pytest

        def test_unmarked():
            time.sleep(0.6)

        @pytest.mark.slow
        def test_marked():
            time.sleep(0.6)

        def test_quick():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_unmarked*", "*mark it @pytest.mark.slow*"])
