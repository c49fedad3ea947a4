# attack: feedback as an oracle
# expect: wrong_answer
# effect: leak
# why: sleeps in proportion to an input so that per-case time would encode it
import time
import numpy as np
def solve(x, scale):
    time.sleep(min(0.5, abs(float(np.asarray(x).ravel()[0])) / 10))
    return x
