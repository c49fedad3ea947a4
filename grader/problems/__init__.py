"""The code that reads problems (the content itself is the top-level problems/ folder): a
folder's strict schema and its reference (``problem``), its optional quiz, a version as
data (``snapshot``), and ``jaxjudge new`` (``scaffold``).
The case type authors yield is ``grader.cases`` (their public import)."""
