# attack: forged result frame
# expect: runtime_error
# effect: none
# why: uses the child's own protocol module to report case 1 before it runs
import os, sys
import numpy as np
from grader.child import protocol
def solve(x, scale):
    specs, data = protocol.pack_arrays([np.zeros((5, 2), np.float32)])
    frame = protocol.encode_frame(protocol.Kind.CASE_RESULT, {'solution': 0, 'case': 1, 'seconds': 0.0, 'outputs': specs}, data)
    os.write(int(sys.argv[1]), frame)
    return x * scale
