"""Grading as the web platform runs it: the queue of submissions and regrades, the workers
that claim them, and what they record. It calls the judge, grader/ (sandboxes, comparison,
verdicts), which knows nothing of app/."""
