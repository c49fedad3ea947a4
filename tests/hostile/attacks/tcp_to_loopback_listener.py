# attack: escape: network
# expect: accepted
# effect: network
# why: connects to a listener the test suite runs on 127.0.0.1
import socket
try:
    socket.create_connection(('127.0.0.1', PORT), timeout=1).sendall(b'hello from the sandbox')
except OSError as error:
    print('connect failed:', error)
def solve(x, scale):
    return x * scale
