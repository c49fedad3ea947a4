# attack: fail-open paths
# expect: runtime_error
# effect: none
# why: writes a frame whose metadata is 100,000 nested arrays (once a RecursionError that killed the parent's reader thread)
import os, sys, struct
def solve(x, scale):
    meta = b'{"a":' + b'[' * 100000 + b']' * 100000 + b'}'
    os.write(int(sys.argv[1]), struct.pack('<4sB3xIQ', b'JJF1', 5, len(meta), 0) + meta)
    return x * scale
