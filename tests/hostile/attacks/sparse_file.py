# attack: resource: disk
# expect: runtime_error
# effect: none
# why: a 10 TB sparse file
def solve(x, scale):
    with open('/tmp/jaxjudge-hostile-sparse', 'wb') as f:
        f.truncate(10 * 2**40)
    return x * scale
