"""The client's one kind of failure: a line that says what went wrong and what to do."""


class CommandError(Exception):
    """A one-line error for the person at the terminal or in the notebook."""
