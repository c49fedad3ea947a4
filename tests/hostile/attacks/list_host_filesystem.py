# attack: escape: reading files
# expect: accepted
# effect: leak
# why: lists what it can see of the host's filesystem
import os
for top in ['/', '/work', '/root', '/home', '/var', '/etc']:
    try:
        print(top, sorted(os.listdir(top))[:50])
    except OSError as error:
        print(top, error)
def solve(x, scale):
    return x * scale
