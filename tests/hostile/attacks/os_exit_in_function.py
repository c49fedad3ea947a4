# attack: early exit
# expect: runtime_error
# effect: none
# why: os._exit(0) inside the function: the process ends with status 0
import os
def solve(x, scale):
    os._exit(0)
