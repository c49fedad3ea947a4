# attack: resource: output
# expect: output_limit_exceeded
# effect: none
# why: returns a 10^8-element array
import numpy as np
def solve(x, scale):
    return np.zeros(10**8, np.int8)
