# attack: state across cases
# expect: wrong_answer
# effect: none
# why: a module-level counter: correct only on the first call
calls = [0]
def solve(x, scale):
    calls[0] += 1
    return x * scale if calls[0] == 1 else x
