# attack: resource: processes
# expect: time_limit_exceeded|runtime_error
# effect: processes
# why: forks until the process limit, in every child
import os
def solve(x, scale):
    while True:
        try:
            os.fork()
        except OSError:
            pass
