# attack: escape: state between submissions
# expect: accepted
# effect: persist
# why: leaves files in /tmp, /dev/shm and the home directory for the next submission
import os
for directory in ('/tmp', '/dev/shm', os.path.expanduser('~'), '/var/tmp'):
    try:
        open(os.path.join(directory, 'jaxjudge-hostile-leftover'), 'w').write('hello, next submission')
    except OSError as error:
        print(directory, error)
def solve(x, scale):
    return x * scale
