# attack: peeking at the reference
# expect: wrong_answer
# effect: none
# why: imports the grader's trusted modules to find expected outputs
def solve(x, scale):
    for name in ['grader.expected', 'grader.grade', 'grader.config']:
        try:
            __import__(name)
            print('imported', name)
        except ImportError as error:
            print('refused', name, error)
    return x
