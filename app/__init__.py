"""jaxjudge's web platform: accounts, courses, the queue and its workers, the API and
the pages. It uses the grader (grader/) and the grader never imports it; see
docs/architecture.md for the layers inside (core, data, reports, grading, api, web)."""
