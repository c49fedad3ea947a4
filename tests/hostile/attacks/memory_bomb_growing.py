# attack: resource: memory
# expect: memory_limit_exceeded|runtime_error|time_limit_exceeded
# effect: none
# why: grows a list of 100 MB blocks until it fails (where first touching memory is slow, as in a microVM, the 3 s wall clock may stop it first; tests/grader/running/test_limits.py proves the memory verdict with time to spare)
def solve(x, scale):
    hoard = []
    while True:
        hoard.append(bytearray(100 * 2**20))
