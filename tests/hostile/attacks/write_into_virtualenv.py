# attack: escape: planting code
# expect: accepted
# effect: files
# why: tries to plant sitecustomize.py and a .pth file in site-packages
import site, sys
for directory in site.getsitepackages() + [sys.prefix]:
    for name in ('sitecustomize.py', 'jaxjudge_hostile.pth'):
        try:
            open(directory + '/' + name, 'w').write('print("jaxjudge-hostile planted")')
        except OSError as error:
            print(directory, name, error)
def solve(x, scale):
    return x * scale
