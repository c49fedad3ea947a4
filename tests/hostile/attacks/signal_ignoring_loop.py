# attack: resource: time
# expect: time_limit_exceeded
# effect: none
# why: ignores every catchable signal before looping
import signal
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
def solve(x, scale):
    while True:
        pass
