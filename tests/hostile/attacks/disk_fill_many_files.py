# attack: resource: disk
# expect: runtime_error|time_limit_exceeded
# effect: none
# why: creates small files until the disk is full
import os
def solve(x, scale):
    os.makedirs('/tmp/jaxjudge-hostile-many', exist_ok=True)
    for i in range(10**7):
        with open(f'/tmp/jaxjudge-hostile-many/{i}', 'wb') as f:
            f.write(b'x' * 4096)
