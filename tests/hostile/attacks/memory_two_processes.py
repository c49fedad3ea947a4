# attack: limits that only look enforced
# expect: memory_limit_exceeded|time_limit_exceeded
# effect: none
# why: two helper processes each hold 1.2 GB (below the 2048 MB limit alone, far above it together), then the main process answers correctly (the 3 s wall clock may come first where touching 2.4 GB is slow; tests/grader/running/test_limits.py proves the memory verdict with time to spare)
import os, time
def solve(x, scale):
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            hold = b'x' * (1200 * 2**20)
            time.sleep(1.5)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return x * scale
