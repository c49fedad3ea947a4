"""jaxjudge's web platform (arrives with the web issue)."""
