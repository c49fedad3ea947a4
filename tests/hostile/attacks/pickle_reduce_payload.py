# attack: hostile serialisation
# expect: wrong_answer
# effect: none
# why: returns an object whose __reduce__ would run a command if anyone unpickled it
import os
class Payload:
    def __reduce__(self):
        return (os.system, ('touch /tmp/jaxjudge-hostile-pickle',))
def solve(x, scale):
    return Payload()
