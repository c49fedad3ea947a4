"""User names that cannot impersonate one another.

Every name has one canonical form, NFKC-normalised and case-folded, and
canonical forms are unique: ``Alice`` and ``alice`` in full-width letters are
the same name as ``alice``. Names in other scripts can look identical without
being equal (a Cyrillic ``a``, U+0430, in ``alice``: Unicode TR39's
"confusables"), so new
names use ASCII letters, digits, ``.``, ``-`` and ``_`` only. Accounts made
before this rule keep signing in with their exact names.
"""

from __future__ import annotations

import re
import unicodedata

NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,30}[A-Za-z0-9])?$")


def canonical(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def problem_with(name: str) -> str | None:
    """Why ``name`` cannot be a new user name, in one sentence (None: it can)."""
    if not name.isascii():
        return (
            "a user name uses only ASCII letters, digits, '.', '-' and '_': letters from other"
            " scripts can look exactly like Latin ones (a Cyrillic '\u0430' in '\u0430lice')"
        )
    if not NAME.match(name):
        return (
            "a user name is 1-32 letters, digits, '.', '-' or '_', starting and ending with a"
            " letter or digit"
        )
    return None
