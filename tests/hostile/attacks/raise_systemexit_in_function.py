# attack: early exit
# expect: runtime_error
# effect: none
# why: raise SystemExit(0) inside the function
def solve(x, scale):
    raise SystemExit(0)
