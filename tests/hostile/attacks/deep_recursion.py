# attack: resource: stack
# expect: runtime_error|time_limit_exceeded
# effect: none
# why: unbounded recursion
import sys
sys.setrecursionlimit(10**6)
def dive(n):
    return dive(n + 1) + 1
def solve(x, scale):
    return dive(0)
