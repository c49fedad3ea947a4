"""Comparing, diagnosing and reporting: what a child's answers are worth. The plain data
of a run (``job``), the comparator and pytree outputs (``compare``, ``trees``), each case
judged as it arrives (``judge``), requirements read from the programs that answered,
known mistakes (``diagnose``), the report and what a learner may see of it."""
