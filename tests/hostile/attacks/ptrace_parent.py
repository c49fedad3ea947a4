# attack: escape: ptrace
# expect: accepted
# effect: none
# why: PTRACE_ATTACH to its parent via ctypes (seccomp refuses it)
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print('ptrace', libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())
def solve(x, scale):
    return x * scale
