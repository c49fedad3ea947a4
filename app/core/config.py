"""The web app reads the one settings object the grader defines (grader/config.py)."""

from grader.config import PROJECT_ROOT, Settings, settings

__all__ = ["PROJECT_ROOT", "Settings", "settings"]
