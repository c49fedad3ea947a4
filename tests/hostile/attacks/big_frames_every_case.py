# attack: resource attacks
# expect: wrong_answer
# effect: none
# why: the largest output the channel takes (a million float64 values, 8 MB a frame) on every case, to make the grading process hold them all
import numpy as np
def solve(x, scale):
    return np.full(1_000_000, float(np.asarray(x).ravel()[0]), dtype=np.float64)
