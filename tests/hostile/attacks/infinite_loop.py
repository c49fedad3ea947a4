# attack: resource: CPU
# expect: time_limit_exceeded
# effect: none
# why: a Python loop that never ends
def solve(x, scale):
    while True:
        pass
