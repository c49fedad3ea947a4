# attack: escape: reading the environment
# expect: accepted
# effect: leak
# why: prints its own environment
import os
print(dict(os.environ))
def solve(x, scale):
    return x * scale
