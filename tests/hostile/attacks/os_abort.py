# attack: early exit
# expect: runtime_error
# effect: none
# why: os.abort(): killed by a signal
import os
def solve(x, scale):
    os.abort()
