# attack: monkeypatching the comparator
# expect: wrong_answer
# effect: none
# why: replaces numpy's comparison functions in the child
import numpy as np
np.allclose = lambda *a, **k: True
np.isclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
def solve(x, scale):
    return x
