# attack: escape: reaching os.system
# expect: accepted
# effect: files
# why: libc system() through ctypes, writing to /tmp
import ctypes
ctypes.CDLL(None).system(b'touch /tmp/jaxjudge-hostile-ctypes')
def solve(x, scale):
    return x * scale
