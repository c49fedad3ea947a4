# attack: strings from the sandbox
# expect: runtime_error
# effect: none
# why: a lone surrogate in an exception message (and in printed output) once made the stored report unreadable: no verdict, no cases, no staff output
def solve(x, scale):
    print("before \ud800 after")
    raise ValueError("broken \ud800 text \udfff" + str(float(scale)))
