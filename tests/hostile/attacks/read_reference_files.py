# attack: peeking at the reference
# expect: wrong_answer
# effect: none
# why: tries to read reference solutions and the expected-output cache from disk
import glob
def solve(x, scale):
    for pattern in ['/work/*/reference_solutions/*.py', '/work/*/var/cache/expected/*', '/tmp/**/refs/*.py', '/root/**/*.npz']:
        for path in glob.glob(pattern, recursive=True):
            print(path, open(path, 'rb').read()[:2000])
    return x
