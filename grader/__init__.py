"""jaxjudge's grading core: problem folders, the sandboxed child, comparison and verdicts.
It imports nothing of app/; the web platform's queue and workers that call it are
app/grading/."""
