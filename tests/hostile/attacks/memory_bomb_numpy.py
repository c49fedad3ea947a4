# attack: resource: memory
# expect: memory_limit_exceeded
# effect: none
# why: allocates 80 GB with numpy
import numpy as np
def solve(x, scale):
    return np.ones(10**10)
