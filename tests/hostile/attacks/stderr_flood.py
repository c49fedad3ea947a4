# attack: resource: output
# expect: output_limit_exceeded
# effect: none
# why: writes to stderr without end
import os
def solve(x, scale):
    while True:
        os.write(2, b'e' * 65536)
