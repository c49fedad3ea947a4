# attack: escape: network
# expect: accepted
# effect: network
# why: IPv6 loopback
import socket
try:
    socket.create_connection(('::1', PORT), timeout=1)
except OSError as error:
    print('refused:', error)
def solve(x, scale):
    return x * scale
