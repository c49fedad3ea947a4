# attack: resource: time
# expect: time_limit_exceeded
# effect: none
# why: time.sleep
import time
def solve(x, scale):
    time.sleep(3600)
