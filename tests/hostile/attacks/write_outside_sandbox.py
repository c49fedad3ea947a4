# attack: escape: writing files
# expect: accepted
# effect: files
# why: tries to write marker files into host locations
import os, glob
targets = ['/tmp/jaxjudge-hostile-out', '/root/jaxjudge-hostile-out', '/var/tmp/jaxjudge-hostile-out'] + [p + '/jaxjudge-hostile-out' for p in glob.glob('/work/*')]
for path in targets:
    try:
        open(path, 'w').write('escaped')
    except OSError as error:
        print(path, error)
def solve(x, scale):
    return x * scale
