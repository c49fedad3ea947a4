# attack: feedback as an oracle
# expect: accepted
# effect: leak
# why: prints every input it gets, hidden ones included, in full precision; answers correctly so the output is kept (the test checks no hidden input reaches the learner)
import numpy as np
def solve(x, scale):
    print('INPUT', [repr(float(v)) for v in np.asarray(x).ravel()], repr(scale), flush=True)
    return x * scale
