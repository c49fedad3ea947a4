# attack: feedback as an oracle
# expect: runtime_error
# effect: leak
# why: exits with a status (and on the second case a signal) computed from the inputs
import os, signal
import numpy as np
calls = [0]
def solve(x, scale):
    calls[0] += 1
    value = int(abs(float(np.asarray(x).ravel()[0])) * 1000)
    if calls[0] > 1:
        os._exit(value % 256)
    return x * scale
