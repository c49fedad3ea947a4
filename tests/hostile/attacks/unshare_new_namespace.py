# attack: escape: namespaces
# expect: accepted
# effect: none
# why: tries unshare(CLONE_NEWUSER) and mount (seccomp refuses them)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print('unshare', libc.unshare(0x10000000), ctypes.get_errno())
print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())
def solve(x, scale):
    return x * scale
