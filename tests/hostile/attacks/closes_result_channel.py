# attack: forged result frame
# expect: runtime_error
# effect: none
# why: closes the result channel so nothing can be reported
import os, sys
def solve(x, scale):
    os.close(int(sys.argv[1]))
    return x * scale
