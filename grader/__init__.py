"""jaxjudge's grading core: problem folders, the sandboxed child, comparison and verdicts."""
