# attack: resource: output
# expect: output_limit_exceeded
# effect: none
# why: prints without end
def solve(x, scale):
    while True:
        print('flood ' * 1000)
