# attack: escape: planting code
# expect: accepted
# effect: persist
# why: writes numpy.py into its working directory for the next import
open('numpy.py', 'w').write('raise SystemExit("jaxjudge-hostile numpy")')
open('/tmp/sitecustomize.py', 'w').write('print("jaxjudge-hostile sitecustomize")')
def solve(x, scale):
    return x * scale
