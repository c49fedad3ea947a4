"""Data functions take the session and their arguments by keyword
(``def f(*, session, ...)``): a call says what it passes, and adding an argument never
shifts another. Checked on every public function of every app.data and app.reports
module and of the LTI modules that are data functions too."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from types import ModuleType

import pytest

import app.data
import app.reports

MODULES = [
    *(f"app.data.{info.name}" for info in pkgutil.iter_modules(app.data.__path__)),
    *(f"app.reports.{info.name}" for info in pkgutil.iter_modules(app.reports.__path__)),
    "app.lti.platforms",
    "app.lti.provisioning",
]


def public_functions(module: ModuleType) -> dict[str, Callable[..., object]]:
    """The module's own public functions (not those it imports)."""
    return {
        name: function
        for name, function in vars(module).items()
        if inspect.isfunction(function)
        and function.__module__ == module.__name__
        and not name.startswith("_")
    }


def takes_session_positionally(function: Callable[..., object]) -> bool:
    parameter = inspect.signature(function).parameters.get("session")
    return parameter is not None and parameter.kind is not inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", MODULES)
def test_public_data_functions_take_the_session_by_keyword(name: str) -> None:
    functions = public_functions(importlib.import_module(name))
    assert [f for f, function in functions.items() if takes_session_positionally(function)] == []


def test_a_positional_session_is_found() -> None:
    def by_position(session: object, slug: str) -> None: ...

    def by_keyword(*, session: object, slug: str) -> None: ...

    def without(slug: str) -> None: ...

    assert takes_session_positionally(by_position)
    assert not takes_session_positionally(by_keyword)
    assert not takes_session_positionally(without)


def test_every_data_module_is_checked() -> None:
    assert len(MODULES) > 15
    assert sum(len(public_functions(importlib.import_module(name))) for name in MODULES) > 90
