# attack: fail-open paths
# expect: runtime_error
# effect: none
# why: writes a well-formed frame claiming 1e999 seconds (once a crash of the report's JSON encoding, retried into an internal error)
import os, sys, struct
def solve(x, scale):
    meta = b'{"solution":0,"case":0,"seconds":1e999,"outputs":[]}'
    os.write(int(sys.argv[1]), struct.pack('<4sB3xIQ', b'JJF1', 4, len(meta), 0) + meta)
    return x * scale
