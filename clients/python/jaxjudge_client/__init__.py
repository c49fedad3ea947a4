"""jaxjudge's client: submit code to a jaxjudge server from a terminal
(`jaxjudge-client submit SLUG file.py`), a script (``submit(...)``) or a notebook
(``%load_ext jaxjudge_client``; see jaxjudge_client.notebook). Standard library
only: it installs into Colab without touching its JAX."""

from jaxjudge_client.errors import CommandError
from jaxjudge_client.notebook import Verdict, load_ipython_extension, submit

__version__ = "0.1.0"
__all__ = ["CommandError", "Verdict", "load_ipython_extension", "submit"]
