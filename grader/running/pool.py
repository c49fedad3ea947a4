"""A warm pool: sandboxed children started ahead of time, one per submission.

Each child has already imported jax/flax/optax (and, with a warming launcher,
exercised them) and sent HELLO; it waits for its one job. When a submission
finishes, a replacement starts in the background, so a submission never pays
for interpreter start-up and imports as long as the pool is larger than the
number of submissions graded at once. A child is used
for exactly one submission and then destroyed with its sandbox, so nothing
passes from one submission to the next.

On a GPU an idle child holds one of the card's slots (grader/running/gpu_sharing.py),
so pooled children are started *standby*: they take a slot only while no child needed
now waits for one, and while one does, the pool closes an idle child to free its slot
(at most one a second), and starts it again once nobody waits. A trusted run or a
grading never waits behind idle children, in this process or another.

The pool is sized from the memory left to use, the machine's or its container's
(grader/running/available_memory.py): below ``min_available_mb`` it starts no idle child
and tries again every ``RESPAWN_AFTER_FAILURE_SECONDS``, so its waiting children never
push the host into its OOM killer.

Children start under the pool's memory ceiling; when a job is delivered,
its sandbox's cgroup is set to the problem's own limit before the child
reads the job (grader/running/supervise.py), so the limit that holds while learner
code runs is the problem's, for every process of the sandbox together.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque

from grader.judging.job import Job, RunOutcome
from grader.running import available_memory, gpu_sharing
from grader.running.frames import CaseListener
from grader.running.launch import Launcher
from grader.running.supervise import Pause, StartedChild, run_retrying

log = logging.getLogger("jaxjudge.pool")
WATCH_SECONDS = 1.0
SPAWN_WAIT_SECONDS = 60.0  # the most a job waits for a child being started
RESPAWN_AFTER_FAILURE_SECONDS = 30.0  # a pool child that failed to start is tried again


class WarmPool:
    def __init__(
        self,
        launcher: Launcher,
        *,
        size: int,
        memory_mb: int,
        device: str = "cpu",
        min_available_mb: int = 0,
    ) -> None:
        if size < 1:
            raise ValueError("a warm pool needs at least one child")
        self.launcher = launcher
        self.size = size
        self.memory_mb = memory_mb
        self.device = device
        # Below this much memory left to use (the machine's or its container's), no idle
        # child is started; one that is missing is tried again later, and a job that
        # finds none ready gets a child of its own, within its problem's limit.
        self.min_available_mb = min_available_mb
        self._idle: deque[StartedChild] = deque()
        self._lock = threading.Lock()
        self._spawning = 0  # replacements started but not yet queued
        self._missing = 0  # children given up or failed to start, to start again later
        self._failed_at = -RESPAWN_AFTER_FAILURE_SECONDS
        self._queued = threading.Condition(self._lock)
        self._closed = False
        self._requests: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._spawner = threading.Thread(
            target=self._spawn_loop, name="jaxjudge-pool-spawn", daemon=True
        )
        self._spawner.start()
        for _ in range(size):
            self._spawn_in_background()
        self._watcher = threading.Thread(
            target=self._watch, name="jaxjudge-pool-watch", daemon=True
        )
        self._watcher.start()

    def _watch(self) -> None:
        """Replace an idle child that dies while it waits (one for one), at once rather
        than at the next submission; on a GPU, give a slot up while another child waits
        for one, and take it again when none does."""
        while True:
            time.sleep(WATCH_SECONDS)
            with self._lock:
                if self._closed:
                    return
                dead = [child for child in self._idle if child.process.poll() is not None]
                for child in dead:
                    self._idle.remove(child)
            for child in dead:
                log.warning(
                    "an idle child died (status %s); replacing it", child.process.returncode
                )
                child.close()
                self._spawn_in_background()
            self._keep_size(self.device == "gpu" and gpu_sharing.slot_wanted())

    def _keep_size(self, wanted: bool) -> None:
        """While a child needed now waits for a GPU slot, close one idle child (its slot
        is freed); once nobody waits, start again the children given up, and those that
        failed to start (every ``RESPAWN_AFTER_FAILURE_SECONDS`` after a failure)."""
        with self._lock:
            given_up = self._idle.pop() if wanted and self._idle else None
            if given_up is not None:
                self._missing += 1
            due = time.monotonic() - self._failed_at >= RESPAWN_AFTER_FAILURE_SECONDS
            respawn = not wanted and due and self._missing > 0
            if respawn:
                self._missing -= 1
        if given_up is not None:
            log.info("a %s child waits for a slot: an idle pooled child gives its up", self.device)
            given_up.close()
        if respawn:
            self._spawn_in_background()

    def stats(self) -> tuple[int, int]:
        """(idle children ready to take a job now, the pool's size)."""
        with self._lock:
            ready = sum(
                1 for c in self._idle if c.collector.hello.is_set() and c.process.poll() is None
            )
        return ready, self.size

    def _spawn(self) -> None:
        child = StartedChild(
            self.launcher, device=self.device, memory_mb=self.memory_mb, standby=True
        )
        with self._lock:
            # Never more idle children than the pool's size (a GPU job may have been given
            # a child of its own while this one waited for a slot).
            surplus = self._closed or len(self._idle) >= self.size
            if not surplus:
                self._idle.append(child)
            self._queued.notify_all()
        if surplus:
            child.close()

    def _memory_short(self) -> bool:
        available = available_memory.available_mb() if self.min_available_mb else None
        if available is None or available >= self.min_available_mb:
            return False
        log.warning(
            "only %d MB of memory left (below %d MB): no idle %s child is started for now;"
            " a submission gets a child of its own",
            available,
            self.min_available_mb,
            self.device,
        )
        return True

    def _spawn_in_background(self) -> None:
        with self._lock:
            self._spawning += 1
        self._requests.put(True)

    def _spawn_loop(self) -> None:
        """Every idle child starts from this one thread, which lives as long as the pool.
        bubblewrap's ``--die-with-parent`` is the kernel's parent-death signal, and that
        follows the *thread* that started the process: a child started from a thread that
        then ends is killed at once (it showed as idle children dying with status -9)."""
        while self._requests.get():
            try:
                with self._lock:
                    closed = self._closed
                if not closed and self._memory_short():
                    with self._lock:
                        self._missing += 1
                        self._failed_at = time.monotonic()
                elif not closed:
                    self._spawn()
            except Exception as error:  # no slot on a busy GPU, a failed launch: tried again
                log.warning("could not start a %s child for the pool: %s", self.device, error)
                with self._lock:
                    self._missing += 1
                    self._failed_at = time.monotonic()
            finally:
                with self._lock:
                    self._spawning -= 1
                    self._queued.notify_all()

    def _take(self) -> StartedChild:
        with self._lock:
            # A child already starting is nearer than a new one (and a second would make
            # the pool larger than its size): wait for it, unless nothing is starting. Not
            # on a GPU, where it may itself be waiting for a slot, deferring to children
            # needed now: this job's child is one, and asks for a slot at once.
            if self.device != "gpu":
                self._queued.wait_for(
                    lambda: bool(self._idle) or self._spawning == 0, timeout=SPAWN_WAIT_SECONDS
                )
            while self._idle:
                child = self._idle.popleft()
                if child.process.poll() is None:
                    return child
                child.close()  # died while waiting: discard
        return StartedChild(self.launcher, device=self.device, memory_mb=self.memory_mb)

    def run(
        self, job: Job, judge: CaseListener | None = None, pause: Pause | None = None
    ) -> RunOutcome:
        if job.device != self.device:
            raise ValueError(f"this pool runs {self.device} jobs, not {job.device}")
        if job.memory_mb > self.memory_mb:
            raise ValueError(
                f"job needs {job.memory_mb} MB, above the pool's {self.memory_mb} MB ceiling"
            )
        try:
            # A child that never started, or that something outside killed, is the
            # grader's hiccup, not the learner's: once more on a fresh child.
            return run_retrying(
                self._take(),
                lambda boosted: StartedChild(
                    self.launcher, device=self.device, memory_mb=self.memory_mb, boosted=boosted
                ),
                job,
                judge,
                pause,
            )
        finally:
            # Replace it afterwards, not meanwhile: on a small machine a child
            # importing JAX would compete for the cores with this submission.
            self._spawn_in_background()

    def wait_until_warm(self, timeout: float = 120.0) -> bool:
        """Block until every replacement is queued and every idle child has
        said HELLO (benchmarks, tests)."""
        with self._lock:
            self._queued.wait_for(lambda: self._spawning == 0, timeout)
            children = list(self._idle)
        return all(child.ready(timeout) for child in children)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            children = list(self._idle)
            self._idle.clear()
        self._requests.put(False)  # the spawner ends after the starts already asked for
        for child in children:
            child.close()
