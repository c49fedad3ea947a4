# attack: overfitting samples
# expect: wrong_answer
# effect: none
# why: answers correctly only for the sample's shape
def solve(x, scale):
    if x.shape == (3,):
        return x * scale
    return x
