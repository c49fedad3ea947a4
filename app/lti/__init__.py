"""LTI 1.3 Advantage: jaxjudge as a tool inside an LMS (Canvas, Moodle, ...).

The launch (OIDC login, id_token validation, accounts and courses linked),
deep linking, grade passback (AGS, through an outbox), the roster (NRPS) and
registration (manual and LTI Dynamic Registration). The pages are in
app/web/lti.py; what an LMS admin enters is in docs/lti.md. This layer imports
core, data and reports; the web imports it.
"""
