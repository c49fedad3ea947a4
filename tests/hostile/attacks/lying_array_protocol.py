# attack: lying conversions
# expect: wrong_answer
# effect: none
# why: __array__ returns zeros while __eq__ claims equality
import numpy as np
class Sneaky:
    def __init__(self, shape): self.shape = shape
    def __array__(self, dtype=None, copy=None): return np.zeros(self.shape, np.float32)
    def __eq__(self, o): return True
def solve(x, scale):
    return Sneaky(x.shape)
