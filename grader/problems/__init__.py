"""Problems as content: a folder's strict schema and its reference (``problem``), its
optional quiz, a version as data (``snapshot``), and ``jaxjudge new`` (``scaffold``).
The case type authors yield is ``grader.cases`` (their public import)."""
