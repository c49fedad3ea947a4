# attack: escape: killing the supervisor
# expect: accepted
# effect: none
# why: SIGKILL to every process it can see, and to its parent
import os, signal
for pid in (os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as error:
        print('kill', pid, error)
def solve(x, scale):
    return x * scale
