# attack: feedback as an oracle
# expect: runtime_error
# effect: leak
# why: raises an exception whose message carries the inputs (the test checks a hidden case shows the exception's type only)
import numpy as np
def solve(x, scale):
    raise ValueError('INPUT ' + ' '.join(repr(float(v)) for v in np.asarray(x).ravel()))
