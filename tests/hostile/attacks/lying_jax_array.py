# attack: lying conversions
# expect: wrong_answer
# effect: none
# why: __jax_array__ hands back the input unchanged
class Sneaky:
    def __init__(self, x): self.x = x
    def __jax_array__(self): return self.x
def solve(x, scale):
    return Sneaky(x)
