# attack: feedback as an oracle
# expect: runtime_error
# effect: leak
# why: raises an exception whose class name spells an input value
import numpy as np
def solve(x, scale):
    digits = repr(float(np.asarray(x).ravel()[0])).replace('.', '_').replace('-', 'm')
    raise type('V' + digits, (Exception,), {})()
