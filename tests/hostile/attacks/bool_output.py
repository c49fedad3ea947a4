# attack: numbers that fool comparisons
# expect: wrong_answer
# effect: none
# why: booleans instead of numbers
def solve(x, scale):
    return x == x
