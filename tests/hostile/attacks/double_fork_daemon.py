# attack: escape: outliving the sandbox
# expect: accepted
# effect: processes
# why: a classic double-fork daemon, then a correct answer
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sh', ['/bin/sh', '-c', 'exec -a jaxjudge-hostile-daemon sleep 600'])
    os._exit(0)
def solve(x, scale):
    return x * scale
