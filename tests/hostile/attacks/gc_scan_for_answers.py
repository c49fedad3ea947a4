# attack: peeking at the reference
# expect: wrong_answer
# effect: none
# why: searches every live object for an array of the answer's shape
import gc
import numpy as np
def solve(x, scale):
    for obj in gc.get_objects():
        if isinstance(obj, np.ndarray) and obj.shape == tuple(x.shape) and obj is not x:
            return obj
    return x
