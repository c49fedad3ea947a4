# attack: limits that only look enforced
# expect: runtime_error
# effect: persist
# why: writes 360 MiB to /dev/shm (once a tmpfs at half of RAM) and leaves it there for the next submission
def solve(x, scale):
    with open('/dev/shm/jaxjudge-hostile-shm', 'wb') as handle:
        for _ in range(360):
            handle.write(b'x' * 2**20)
    return x * scale
