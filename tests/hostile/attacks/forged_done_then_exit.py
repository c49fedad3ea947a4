# attack: forged result frame
# expect: runtime_error
# effect: none
# why: sends DONE early and exits, hoping unreported cases count as passed
import os, sys
from grader.child import protocol
def solve(x, scale):
    os.write(int(sys.argv[1]), protocol.encode_frame(protocol.Kind.DONE, {}))
    os._exit(0)
