# attack: always-equal objects
# expect: wrong_answer
# effect: none
# why: a float subclass overriding __sub__, __abs__, __lt__, __le__
class Liar(float):
    def __sub__(self, o): return 0.0
    def __rsub__(self, o): return 0.0
    def __abs__(self): return 0.0
    def __lt__(self, o): return True
    def __le__(self, o): return True
    def __eq__(self, o): return True
    __hash__ = float.__hash__
def solve(x, scale):
    return [[Liar(0.0)] * x.shape[1]] * x.shape[0] if x.ndim == 2 else [Liar(0.0)] * x.shape[0]
