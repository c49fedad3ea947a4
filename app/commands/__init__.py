"""The `jaxjudge` command line: its entry point and its command groups."""
