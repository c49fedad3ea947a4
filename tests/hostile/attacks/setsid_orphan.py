# attack: escape: outliving the sandbox
# expect: accepted
# effect: processes
# why: starts a setsid() process that should outlive grading, then answers correctly
import subprocess
subprocess.Popen(['/bin/sh', '-c', 'exec -a jaxjudge-hostile-orphan sleep 600'], start_new_session=True)
def solve(x, scale):
    return x * scale
