# attack: resource attacks
# expect: wrong_answer
# effect: none
# why: writes 600 MiB to the sandbox's root (once a writable tmpfs outside every cap) and to /dev; passes only if the writes succeed
import os
import numpy as np
def solve(x, scale):
    written = 0
    for path in ("/jaxjudge-hostile-fill", "/dev/jaxjudge-hostile-fill"):
        try:
            with open(path, "wb") as handle:
                chunk = b"\0" * (1 << 20)
                for _ in range(300):
                    handle.write(chunk)
                    written += len(chunk)
        except OSError:
            pass
    if written >= 600 << 20:
        return np.asarray(x) * scale
    return np.zeros_like(np.asarray(x))
