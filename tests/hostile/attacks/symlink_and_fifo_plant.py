# attack: escape: planted links
# expect: accepted
# effect: files
# why: plants symlinks and a FIFO where a careless trusted side might read or write
import os
for name, target in [('result', '/etc/passwd'), ('stdout', '/root/.bashrc'), ('expected.npz', '/work')]:
    try:
        os.symlink(target, '/tmp/' + name)
    except OSError as error:
        print(error)
os.mkfifo('/tmp/jaxjudge-hostile-fifo')
def solve(x, scale):
    return x * scale
