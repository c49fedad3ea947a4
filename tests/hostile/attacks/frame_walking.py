# attack: peeking at the reference
# expect: wrong_answer
# effect: none
# why: walks the call stack looking for expected values
import sys
def solve(x, scale):
    frame = sys._getframe(1)
    while frame:
        for name, value in frame.f_locals.items():
            if 'expect' in name or 'desired' in name or 'reference' in name:
                return value
        frame = frame.f_back
    return x
