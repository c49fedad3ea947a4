# attack: resource: memory
# expect: memory_limit_exceeded|runtime_error
# effect: none
# why: grows a list of 100 MB blocks until it fails
def solve(x, scale):
    hoard = []
    while True:
        hoard.append(bytearray(100 * 2**20))
