# attack: resource: disk
# expect: runtime_error
# effect: none
# why: writes a 1 GB file into the sandbox's /tmp
def solve(x, scale):
    with open('/tmp/jaxjudge-hostile-big', 'wb') as f:
        for _ in range(1024):
            f.write(b'\0' * 2**20)
    return x * scale
