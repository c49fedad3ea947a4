# attack: escape: network
# expect: accepted
# effect: network
# why: UDP to loopback and a DNS lookup
import socket
for attempt in (lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', PORT)), lambda: socket.gethostbyname('pypi.org')):
    try:
        attempt()
    except OSError as error:
        print('refused:', error)
def solve(x, scale):
    return x * scale
