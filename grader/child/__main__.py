"""``python -I -u -m grader.child RESULT_FD [--warm-up]``: a trusted child."""

from grader.child.run import main

main()
