"""What runs inside the child process, sandboxed or not: ``run`` (its main), the framed
``protocol`` both sides speak, the ``verdicts`` both sides name, and the library
``warmup``. The sandbox mounts this folder and nothing else of the project: its modules
import only each other, the standard library, numpy and the JAX stack
(tests/grader/child/test_package.py)."""
