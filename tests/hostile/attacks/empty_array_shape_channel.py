# attack: channels hidden in structural facts
# expect: wrong_answer|output_limit_exceeded
# effect: leak
# why: an empty array may have any other dimensions, so (0, a, b) with a and b read off the hidden input would carry two numbers back in a wrong-shape message
import numpy as np
def solve(x, scale):
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).ravel()
    a, b = int(bits[0] % 40000) + 1, int(bits[-1] % 30000) + 1
    return np.zeros((0, a, b), dtype=np.float32)
